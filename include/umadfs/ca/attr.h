/* Attribute files: CA and port attributes named and formatted as the
 * kernel's /sys/class/infiniband files, read live on every open. */
#ifndef UMADFS_ATTR_H
#define UMADFS_ATTR_H

struct node;
struct ca;
struct ca_port;

int attr_add_ca_files(struct node *dir, struct ca *ca);
int attr_add_port_files(struct node *dir, struct ca_port *port);
/* The port's LID now (live, as its `lid` file shows), or -errno. */
int attr_port_lid(struct ca_port *port);

#endif
