/* ibnetdiscover's topology file format (topofile.c): a text into a
 * snapshot, and a sweep's snapshot into what that text would give.  Such
 * a snapshot holds nodes with their GUID, type, number of ports,
 * description, system image GUID, vendor and device IDs; a switch's port
 * 0 GUID, LID and LMC; a CA's or router's linked ports' GUIDs and LMCs;
 * and each linked port's peer_guid/peer_port (both ends), LID (a switch
 * port's is the one its peer's line gives, port 0's), state 4 (Active)
 * and phys_state 5 (LinkUp), and width/speed/ext_speed in PortInfo's
 * encodings when a line's comment gives them (`4xEDR`: width 2,
 * ext_speed 2), else 0.  Unlinked ports are all zeros; no port has_info
 * or counters. */
#ifndef UMADFS_TOPOFILE_H
#define UMADFS_TOPOFILE_H

#include <stdbool.h>
#include <stddef.h>

struct fab_snap;

/* What a text may hold: the bytes of one text, its nodes, and their ports
 * (NumPorts + 1 each, the sum): a snapshot of 54 MB at most (184 bytes a
 * node, 160 a port). */
#define TOPOFILE_TEXT_MAX (64u << 20)
#define TOPOFILE_NODES_MAX 65536u
#define TOPOFILE_PORTS_MAX 262144u
#define TOPOFILE_LINE_MAX 4096u   /* bytes of one line, '\n' aside */

/* Parses an ibnetdiscover text (text[0..len), NUL bytes refused) into a
 * new snapshot (*out, its time now, ok set): 0, also for a text without a
 * node (blank lines and comments, or the word clear: *out has no node);
 * -EINVAL with "line L column C: reason" in why (columns count bytes from
 * 1; more nodes, ports or bytes in a line than the bounds above too),
 * -EFBIG for more than TOPOFILE_TEXT_MAX bytes, -ENOMEM.  *out is NULL on
 * failure.  A link the lines of its two ends give differently is refused;
 * one given by one end only is taken for both. */
int topofile_parse(const char *text, size_t len, struct fab_snap **out,
		   char *why, size_t cap);
/* The same read as it is written: a parser fed the text's lines as they
 * come, which refuses a line as soon as it has it (and an unfinished line
 * once it is longer than a line may be, or holds a NUL byte), and judges
 * what needs the whole text (names, links, KEY= lines left without their
 * node line) at the end.  NULL on ENOMEM. */
struct topofile_parser;
struct topofile_parser *topofile_parser_new(void);
void topofile_parser_free(struct topofile_parser *p);
/* Reads the lines of text[0..len) it has not read: text is the whole text
 * so far (the same bytes as at the last call, and more; it may have
 * moved).  0, or as topofile_parse(); after a refusal p is only freed. */
int topofile_parser_feed(struct topofile_parser *p, const char *text, size_t len,
			 char *why, size_t cap);
/* The end of the text: its last line, then what needs it all; *out as
 * topofile_parse() gives it.  Once only; then p is only freed. */
int topofile_parser_finish(struct topofile_parser *p, const char *text,
			   size_t len, struct fab_snap **out, char *why, size_t cap);
/* Whether the text read is the word clear (on a line of its own, with
 * blank lines and comments only: topofile_parse() gives it as a text
 * without nodes; any other line with it is refused). */
bool topofile_parser_clears(const struct topofile_parser *p);
/* The bytes p holds (its snapshot so far, its names and links). */
size_t topofile_parser_size(const struct topofile_parser *p);
/* A sweep's topology as topofile_parse() gives it from the sweep's
 * fabric/topology: the nodes, their IDs and descriptions, port GUIDs,
 * LIDs and LMCs, and the links (Active, LinkUp) with the widths and
 * speeds they ran at; NULL on ENOMEM. */
struct fab_snap *topofile_of_sweep(const struct fab_snap *sweep);

#endif
