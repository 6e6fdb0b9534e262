/* Attribute files: CA and port attributes named and formatted as the
 * kernel's /sys/class/infiniband files, read live on every open. */
#ifndef UMADFS_ATTR_H
#define UMADFS_ATTR_H

#include <stddef.h>
#include <sys/types.h>

struct node;
struct ca;
struct ca_port;

int attr_add_ca_files(struct node *dir, struct ca *ca);
int attr_add_port_files(struct node *dir, struct ca_port *port);
/* The port's LID now (live, as its `lid` file shows), or -errno. */
int attr_port_lid(struct ca_port *port);
/* One line of a kernel sysfs file into buf, ending in '\n': its length,
 * or -1 when the file cannot be read. */
ssize_t attr_sysfs_line(const char *path, char *buf, size_t cap);

#endif
