/* The MAD itself: its sizes, the umad frame around it, and the questions
 * every layer asks of one (is it a response, an SMP, a state change; its
 * TID).  Names and numbers come from libibmad where it has them. */
#ifndef UMADFS_MAD_H
#define UMADFS_MAD_H

#include <stdbool.h>
#include <stdint.h>

#define UMAD_FRAME_HDR_SIZE 64 /* sizeof(struct ib_user_mad): before the MAD */
#define MAD_SIZE 256           /* one MAD; RMPP messages are longer */
#define MAD_HDR_SIZE 24        /* the common MAD header (IBA 13.4.2) */
#define UMAD_FRAME_MAX (UMAD_FRAME_HDR_SIZE + MAD_SIZE) /* one-MAD frame */

/* A method that answers another (GetResp, TrapRepress, ...): the kernel's
 * ib_response_mad() without the baseboard special case. */
bool mad_method_is_response(unsigned method);
/* The same question of a whole MAD (mad_len >= MAD_HDR_SIZE), as
 * ib_response_mad(): BM marks responses in the attribute modifier.  No
 * pending request ever matches such a MAD. */
bool mad_is_response(const uint8_t *mad);
/* LID-routed or directed-route SMP (classes 0x01, 0x81). */
bool mad_class_is_smi(unsigned mgmt_class);
/* Methods that change state: Set, and Delete (SA). */
bool mad_method_changes_state(unsigned method);

/* The 64-bit transaction ID, host order. */
uint64_t mad_tid(const uint8_t *mad);
void mad_set_tid(uint8_t *mad, uint64_t tid);

#endif
