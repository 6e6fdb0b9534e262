/* The receiver thread of a port (receiver.c). */
#ifndef UMADFS_RECEIVER_H
#define UMADFS_RECEIVER_H

/* The thread's function; arg: the struct mad_engine. */
void *receiver_main(void *arg);

#endif
