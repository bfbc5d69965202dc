/* datinfo: what libdat sees (see datinfo(1)). */
#ifndef DATINFO_H
#define DATINFO_H

/* "datinfo --conf": prints the dat.conf lines that suit this host. */
int datinfo_conf(void);

#endif
