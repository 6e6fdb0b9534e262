/* agents/: private channels.  mkdir agents/NAME makes a channel with its
 * own queue and the port's MAD files, plus `register` for unsolicited
 * MADs; rmdir unregisters its agents and drops its queue. */
#ifndef UMADFS_AGENTS_H
#define UMADFS_AGENTS_H

#include <sys/types.h>

struct node;
struct ca_port;
struct channel;

int agents_add_dir(struct node *port_dir, struct ca_port *port);
/* The `register` file of a channel directory made by owner. */
int agents_add_register_file(struct node *dir, struct channel *ch, uid_t owner);

#endif
