/* A port's issm file: the port's IsSM capability held by the file's
 * holder (the opener for writing), as the kernel's issm device does. */
#ifndef UMADFS_ISSM_H
#define UMADFS_ISSM_H

struct node;
struct ca_port;

/* Adds port_dir/issm (root's, 0600): 0 or -ENOMEM. */
int issm_add_file(struct node *port_dir, struct ca_port *port);
/* The port's CA went: the opens waiting fail with ENODEV, and no one
 * holds it from now on (the holder's close gives nothing back: the
 * engine closed the device). */
void issm_port_gone(struct ca_port *port);
/* At exit, before ca_free(): as issm_port_gone, and frees its state. */
void issm_port_free(struct ca_port *port);

#endif
