/* The PMA's detail counters (pmadetails.c): PortRcvErrorDetails,
 * PortXmitDiscardDetails and PortVLXmitWaitCounters, by sysfs-style names
 * (counters/), each with its attribute, its libibmad field and the
 * PortCounters counter it details (the summary a sweep watches). */
#ifndef UMADFS_PMADETAILS_H
#define UMADFS_PMADETAILS_H

#include <stdbool.h>
#include <stdint.h>

/* The three attributes, a bit each in a port's masks (fabsnap.h). */
enum pmadetails_attr {
	PMADET_RCV,   /* PortRcvErrorDetails, detailing port_rcv_errors */
	PMADET_XMIT,  /* PortXmitDiscardDetails, port_xmit_discards */
	PMADET_VL,    /* PortVLXmitWaitCounters, port_xmit_wait */
	PMADET_ATTRS
};

/* The data bytes kept of each attribute's answer (its fields' end). */
#define PMADET_RCV_LEN 16
#define PMADET_XMIT_LEN 12
#define PMADET_VL_LEN 36
/* The data VLs a port may have (OperationalVLs VL0-14). */
#define PMADET_VLS 15

/* The counters by index, 0 to pmadetails_count() - 1: the receive
 * details, the discard details, then PortVLXmitWait of VL0 to VL14. */
unsigned pmadetails_count(void);
const char *pmadetails_name(unsigned i);
enum pmadetails_attr pmadetails_attr_of(unsigned i);
/* Counter i's VL (its PortVLXmitWait), or -1 when not a VL's; the index
 * of VL vl's counter (vl < PMADET_VLS). */
int pmadetails_vl(unsigned i);
unsigned pmadetails_vl_counter(unsigned vl);
/* Counter i's value from its attribute's data (as kept). */
uint64_t pmadetails_value(unsigned i, const uint8_t *data);
/* The attribute's ID (IB_GSI_*), and the index (pmacounters.h) of the
 * counter it details. */
unsigned pmadetails_attr_id(enum pmadetails_attr a);
unsigned pmadetails_summary(enum pmadetails_attr a);
/* The number of data VLs of a PortInfo OperationalVLs code (1: VL0,
 * 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14), 0 for another code. */
unsigned pmadetails_oper_vls(unsigned code);

#endif
