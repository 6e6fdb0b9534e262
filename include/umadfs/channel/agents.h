/* agents/: private channels.  mkdir agents/NAME makes a channel with its
 * own queue and the port's MAD files, plus `register` for unsolicited
 * MADs; rmdir unregisters its agents and drops its queue. */
#ifndef UMADFS_AGENTS_H
#define UMADFS_AGENTS_H

#include <stddef.h>
#include <sys/types.h>

struct node;
struct ca_port;
struct channel;
struct engine_registration;

int agents_add_dir(struct node *port_dir, struct ca_port *port);
/* The `register` file of a channel directory made by owner. */
int agents_add_register_file(struct node *dir, struct channel *ch, uid_t owner);
/* One line written to `register` (len bytes, no '\n'): "class=...
 * [version=...] [methods=get,set,...] [oui=0x...] [rmpp=0|1]" into reg.  0,
 * or -EINVAL with a one-line reason in why.  No I/O: register's write
 * handler and tests/fuzz/fuzz_register.c call it. */
int agents_parse_registration(const char *line, size_t len,
			      struct engine_registration *reg, char *why,
			      size_t whylen);

#endif
