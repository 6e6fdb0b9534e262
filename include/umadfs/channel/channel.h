/* A channel: one queue of received MADs that its open files read, as text
 * lines (recv) or as umad frames (umad).  The port's own MAD files are the
 * channel "default", agents/NAME directories named channels.
 *
 * An item goes to one reader: the unsolicited MADs of the channel's
 * registrations to whichever open file reads first, an answer to the open
 * file that sent the request (a umad open, or the text view for `send`). */
#ifndef UMADFS_CHANNEL_H
#define UMADFS_CHANNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fuse_lowlevel.h>

#include "umadfs/engine/engine.h"
#include "umadfs/fuse/readq.h"

#define CHANNEL_QUEUE_DEFAULT 4096 /* items; -o queue_len= */
#define CHANNEL_TIMEOUT_DEFAULT 1000 /* ms, libibmad's default */
#define CHANNEL_RETRIES_DEFAULT 3

struct ca_port;
struct channel_item;

struct channel_stats {
	uint64_t sent, received, timeouts, errors, dropped;
};

/* Where the engine delivers: a channel's item goes to its readers by it. */
struct channel_sink {
	struct mad_sink sink; /* first: the engine hands back &sink */
	struct channel *ch;
};

struct channel {
	struct channel_sink unsolicited; /* its registrations' MADs: any reader */
	struct channel_sink text;        /* answers to `send`: text readers */
	/* Only for its engine (channel_engine()) and to know which port's
	 * events (channel_port_set_transport, channel_port_gone) are its own. */
	struct ca_port *port;
	char where[128];      /* "CA/port name", for messages */

	struct readq q; /* readers; q.lock guards everything below too */
	struct channel_item *head, *tail;
	unsigned queued, limit;
	struct channel_item *spare; /* read items kept for reuse */
	unsigned nspare;
	struct channel_stats stats; /* but for sent: */
	uint64_t sent;              /* atomic, no lock */
	int timeout_ms, retries;  /* defaults for requests sent from here */
	unsigned decode_flags;    /* madtext_format() flags: decode setting */
	char last_error[512];     /* why the last bad write failed */
	unsigned refs;   /* creator + tree nodes (atomic); freed at zero */
	unsigned nusers; /* open send/recv/umad files (atomic): rmdir EBUSY */
};

/* What one open file of a channel keeps; the file layer's own state may
 * follow it (channel_open_new's size), freed by fini. */
struct channel_open {
	struct readq_open ro;     /* first: readq hands this back */
	struct channel *ch;
	struct channel_sink answers; /* frames: answers to its own requests */
	bool frames;              /* reads umad frames (umad), not lines */
	bool privileged;          /* the opener may send SMPs and Sets */
	struct line_rest rest;    /* of a line a short read cut (q.lock) */
	void (*fini)(struct channel_open *of); /* optional, before the free */
};

extern unsigned channel_queue_limit; /* for new channels; -o queue_len= */

/* The engine of the channel's port for one call (ca_port_engine()), or
 * NULL when the port has none (*err, if err, says why: -ENODEV once its
 * CA is gone); channel_engine_done() after the call. */
struct mad_engine *channel_engine(struct channel *ch, int *err);
void channel_engine_done(struct channel *ch);

/* A new channel, with one reference for its creator. */
struct channel *channel_new(struct ca_port *port, const char *name);
void channel_get(struct channel *ch);
/* Drops a reference; the last one unregisters its agents, fails parked
 * reads, forgets pending requests and frees it. */
void channel_put(struct channel *ch);
/* Stops a channel now (rmdir): agents unregistered, reads fail with
 * ENODEV, nothing more delivered.  The memory stays until the last put. */
void channel_shut(struct channel *ch);
/* 0 once no send/recv/umad file of ch is open, or -EBUSY after
 * READQ_RELEASE_WAIT_MS (see readq.h: files closed just before rmdir). */
int channel_wait_unused(struct channel *ch);
/* The engine of port found its transport dead (err EIO) or back (0): every
 * channel of the port fails its reads with err, or serves them again (see
 * readq_set_error).  Receiver thread. */
void channel_port_set_transport(struct ca_port *port, int err);
/* port's CA is gone (before its engine is taken away): every channel of the
 * port fails its reads with EIO and polls POLLERR for good, as the
 * kernel's umad files of a removed port, and drops what it had queued. */
void channel_port_gone(struct ca_port *port);

void channel_set_error(struct channel *ch, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* An open file of ch (size bytes: a struct channel_open first), linked
 * for poll notifications and counted in ch->nusers (rmdir waits). */
struct channel_open *channel_open_new(struct channel *ch, bool frames, size_t size,
				      void (*fini)(struct channel_open *of));
/* Forgets its pending requests and the answers queued for it. */
void channel_open_free(struct channel_open *of);

/* Sends a frame written on of.  A request's answer comes back to of's
 * view (a umad open itself; the text readers for `send`); a response goes
 * out through the agent the channel registered for its class. */
int channel_send(struct channel_open *of, void *frame, size_t mad_len,
		 int timeout_ms, int retries);
/* What a failed channel_send() (r) says in last_error: strerror, and for
 * EIO why (the port's transport is down, or the device refused the send). */
void channel_strerror(struct channel *ch, int r, char *buf, size_t len);

#endif
