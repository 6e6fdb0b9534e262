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
/* Classes the kernel treats as RMPP classes that libibmad does not name. */
#define MAD_CLASS_DEVICE_ADM 0x10
#define MAD_CLASS_BIS 0x12
#define MAD_LID_PERMISSIVE 0xffff /* directed-route ends, DR SMP's LID */

/* A method that answers another (GetResp, TrapRepress, ...): the kernel's
 * ib_response_mad() without the baseboard special case. */
bool mad_method_is_response(unsigned method);
/* The same question of a whole MAD (mad_len >= MAD_HDR_SIZE), as
 * ib_response_mad(): BM marks responses in the attribute modifier.  No
 * pending request ever matches such a MAD. */
bool mad_is_response(const uint8_t *mad);
/* LID-routed or directed-route SMP (classes 0x01, 0x81). */
bool mad_class_is_smi(unsigned mgmt_class);
/* Vendor classes 0x30-0x4f: they carry an OUI (IB_VEND2_OUI_F). */
bool mad_class_is_vendor_range2(unsigned mgmt_class);
/* The kernel's ib_is_mad_class_rmpp(): only these classes may send a
 * message longer than one MAD. */
bool mad_class_uses_rmpp(unsigned mgmt_class);
/* The OUI of a vendor range 2 MAD (at least its 40 bytes up to the OUI),
 * 0 for a MAD of any other class. */
uint32_t mad_vendor_oui(const uint8_t *mad);
/* Methods that change state: Set, and Delete (SA). */
bool mad_method_changes_state(unsigned method);

/* Whether answer, a response (a received frame: the umad header and at
 * least the MAD header), can be the answer of request (the frame sent,
 * the same) whose TID it carries.  As the kernel's ib_find_send_mad(): of
 * the request's class, and a directed-route SMP matched by its TID alone
 * (its LIDs may be permissive).  Then from where the request went, which
 * the kernel does not ask (rcv_has_same_gid() checks this end: the path
 * bits or GID the answer came to; a switch or an HCA takes only what is
 * addressed to it, so on hardware the source is where the request went):
 * for a request LID-routed to a unicast LID, the answer's source GID is
 * the request's destination GID when both carry a GRH, else the answer's
 * source LID the request's destination LID but for the low lmc bits (the
 * path bits: a responder of LMC lmc answers from any of its LIDs).  A
 * request to the permissive or a multicast LID has no one source. */
bool mad_answer_matches(const uint8_t *request, const uint8_t *answer, unsigned lmc);

/* The 64-bit transaction ID, host order. */
uint64_t mad_tid(const uint8_t *mad);
void mad_set_tid(uint8_t *mad, uint64_t tid);

#endif
