/* fabric/expected: the topology the fabric should have, in ibnetdiscover's
 * format, loaded from -o fabric_expected=PATH, written by the user (saved
 * to PATH), or else the first complete sweep since mount (ok, and no node
 * unreachable).  It is kept as a snapshot that never changes once
 * published: nodes with their GUID, type, number of ports, description,
 * system image GUID, vendor and device IDs; a switch's port 0 GUID, LID
 * and LMC; a CA's or router's linked ports' GUIDs and LMCs; and each
 * linked port's peer_guid/peer_port (both ends), LID (a switch port's is
 * the one its peer's line gives, port 0's), state 4 (Active) and
 * phys_state 5 (LinkUp), and width/speed/ext_speed in PortInfo's encodings
 * when a line's comment gives them (`4xEDR`: width 2, ext_speed 2), else
 * 0.  Unlinked ports are all zeros; no port has_info or counters. */
#ifndef UMADFS_EXPECTED_H
#define UMADFS_EXPECTED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct node;
struct fab_snap;

/* What a text may hold: the bytes of one text (a write, or PATH), its
 * nodes, and their ports (NumPorts + 1 each, the sum): a snapshot of 54 MB
 * at most (184 bytes a node, 160 a port). */
#define EXPECTED_TEXT_MAX (64u << 20)
#define EXPECTED_NODES_MAX 65536u
#define EXPECTED_PORTS_MAX 262144u
#define EXPECTED_LINE_MAX 4096u   /* bytes of one line, '\n' aside */
/* Bytes held at once by all the opens of fabric/expected being written. */
#define EXPECTED_PENDING_MAX (128u << 20)

/* At mount: loads path (NULL: none) and keeps it to save writes to.  A
 * missing file is no expectation yet (the first write creates it); a
 * malformed one, or one that cannot be read, -EINVAL with the reason
 * (line and column) on stderr.  Called again, it replaces what it set. */
int expected_configure(const char *path);
/* Adds fabric/expected: root's, and group's if not NULL (mode 0664). */
int expected_add(struct node *fabric_dir, const gid_t *group);
/* A new snapshot, before it is judged (the sweep thread): when there is no
 * expectation and snap is complete (ok, no node unreachable), its
 * topology becomes the expectation. */
void expected_offer(struct fab_snap *snap);
/* The expected topology (a reference; fabsnap_put it), or NULL. */
struct fab_snap *expected_get(void);
/* Parses an ibnetdiscover text (text[0..len), NUL bytes refused) into a
 * new snapshot (*out, its time now, ok set): 0, also for a text without a
 * node (blank lines and comments, or the word clear: *out has no node);
 * -EINVAL with "line L
 * column C: reason" in why (columns count bytes from 1; more nodes, ports
 * or bytes in a line than the bounds above too), -EFBIG for more than
 * EXPECTED_TEXT_MAX bytes, -ENOMEM.  *out is NULL on failure.  A link the
 * lines of its two ends give differently is refused; one given by one end
 * only is taken for both. */
int expected_parse(const char *text, size_t len, struct fab_snap **out,
		   char *why, size_t cap);
/* The same read as it is written: a parser fed the text's lines as they
 * come, which refuses a line as soon as it has it (and an unfinished line
 * once it is longer than a line may be, or holds a NUL byte), and judges
 * what needs the whole text (names, links, KEY= lines left without their
 * node line) at the end.  NULL on ENOMEM. */
struct expected_parser;
struct expected_parser *expected_parser_new(void);
void expected_parser_free(struct expected_parser *p);
/* Reads the lines of text[0..len) it has not read: text is the whole text
 * so far (the same bytes as at the last call, and more; it may have
 * moved).  0, or as expected_parse(); after a refusal p is only freed. */
int expected_parser_feed(struct expected_parser *p, const char *text, size_t len,
			 char *why, size_t cap);
/* The end of the text: its last line, then what needs it all; *out as
 * expected_parse() gives it.  Once only; then p is only freed. */
int expected_parser_finish(struct expected_parser *p, const char *text,
			   size_t len, struct fab_snap **out, char *why, size_t cap);
/* Whether the text read is the word clear (on a line of its own, with
 * blank lines and comments only: expected_parse() gives it as a text
 * without nodes; any other line with it is refused). */
bool expected_parser_clears(const struct expected_parser *p);
/* The bytes p holds (its snapshot so far, its names and links). */
size_t expected_parser_size(const struct expected_parser *p);
/* A sweep's topology as expected_parse() gives it from the sweep's
 * fabric/topology: the nodes, their IDs and descriptions, port GUIDs,
 * LIDs and LMCs, and the links (Active, LinkUp) with the widths and
 * speeds they ran at; NULL on ENOMEM. */
struct fab_snap *expected_topology_of(const struct fab_snap *sweep);
/* At exit: drops the expectation and the opens whose RELEASE never came. */
void expected_close(void);

#endif
