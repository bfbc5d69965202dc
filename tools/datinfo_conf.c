/* datinfo --conf: the dat.conf lines that suit this host.
 *
 * One verbs line per RDMA device port whose network interface has an IP
 * address (the RDMA CM finds devices by address), named the way
 * OpenFabrics' 1.2 dat.conf named them: OpenIB-cma for ib0, OpenIB-cma-N
 * for ibN, OpenIB-cma-roe-<netdev> for RoCE, OpenIB-iwarp for the first
 * iWARP netdev and OpenIB-iwarp-<netdev> for the others; then the
 * software providers.
 *
 * Devices come from sysfs: /sys/class/infiniband/<dev>/node_type,
 * ports/<n>/link_layer and the port's netdev (ports/<n>/gid_attrs/ndevs/0,
 * else the device's "parent", else a /sys/class/net/<if>/device/infiniband
 * link).  DATINFO_SYSFS_ROOT puts another tree in place of /sys, and
 * DATINFO_ADDRS ("ib0=10.0.0.1,eth2=fe80::1") of the host's addresses, so
 * tests need no hardware. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datinfo.h"

/* The software providers' lines, in the order they are printed. */
static const char *const software_lines[] = {
	/* the native TCP (iWARP) provider first: the default software path */
	"tcp u1.2 nonthreadsafe default libdapltcp.so.1 dapl.1.2 "
	"\"127.0.0.1 0\" \"\"",
	"ofi-tcp u1.2 nonthreadsafe default libdaplofi.so.1 dapl.1.2 "
	"\"tcp 127.0.0.1\" \"\"",
	/* the same for DAT 2.0 programs (libdat2.so.2) */
	"tcp u2.0 nonthreadsafe default libdapl2tcp.so.2 dapl.2.0 "
	"\"127.0.0.1 0\" \"\"",
	"ofi-tcp u2.0 nonthreadsafe default libdapl2ofi.so.2 dapl.2.0 "
	"\"tcp 127.0.0.1\" \"\"",
};

#define VERBS_LIB "libdaplverbs.so.1"
#define VERBS2_LIB "libdapl2verbs.so.2"

static const char *sysfs(void)
{
	const char *r = getenv("DATINFO_SYSFS_ROOT");

	return r && *r ? r : "/sys";
}

/* The first line of sysfs file rel (under the sysfs root), without its
 * newline; 0 when read. */
static int read_line(char *out, size_t len, const char *rel)
{
	char path[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysfs(), rel);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(out, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return out[0] ? 0 : -1;
}

/* An IP address of netdev, as text, or 0 when it has none. */
static int netdev_addr(const char *netdev, char *out, size_t len)
{
	const char *fake = getenv("DATINFO_ADDRS");
	struct ifaddrs *ifs, *ifa;
	int found = 0;

	if (fake) {
		size_t n = strlen(netdev);
		const char *p = fake;

		while (p && *p) {
			if (!strncmp(p, netdev, n) && p[n] == '=') {
				snprintf(out, len, "%.*s", (int)strcspn(p + n + 1, ","),
					 p + n + 1);
				return 1;
			}
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		return 0;
	}
	if (getifaddrs(&ifs))
		return 0;
	/* IPv4 first: it is what users write in ia_params */
	for (ifa = ifs; ifa && !found; ifa = ifa->ifa_next)
		if (ifa->ifa_addr && !strcmp(ifa->ifa_name, netdev) &&
		    ifa->ifa_addr->sa_family == AF_INET)
			found = inet_ntop(AF_INET,
					  &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr,
					  out, (socklen_t)len) != NULL;
	for (ifa = ifs; ifa && !found; ifa = ifa->ifa_next)
		if (ifa->ifa_addr && !strcmp(ifa->ifa_name, netdev) &&
		    ifa->ifa_addr->sa_family == AF_INET6)
			found = inet_ntop(AF_INET6,
					  &((struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr,
					  out, (socklen_t)len) != NULL;
	freeifaddrs(ifs);
	return found;
}

/* The netdev of port of dev, from /sys/class/net/<if>/device/infiniband. */
static int netdev_by_link(const char *dev, const char *port, char *out,
			  size_t len)
{
	char path[1024], rel[1024], devport[32];
	struct dirent *d;
	DIR *dir;
	int found = 0;

	snprintf(path, sizeof(path), "%s/class/net", sysfs());
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && (d = readdir(dir))) {
		DIR *ib;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/class/net/%s/device/infiniband/%s",
			 sysfs(), d->d_name, dev);
		ib = opendir(path);
		if (!ib)
			continue;
		closedir(ib);
		/* dev_port counts from 0, IB ports from 1 */
		snprintf(rel, sizeof(rel), "class/net/%s/dev_port", d->d_name);
		if (read_line(devport, sizeof(devport), rel) == 0 &&
		    strtoul(devport, NULL, 0) + 1 != strtoul(port, NULL, 10))
			continue;
		snprintf(out, len, "%s", d->d_name);
		found = 1;
	}
	closedir(dir);
	return found;
}

static int port_netdev(const char *dev, const char *port, char *out, size_t len)
{
	char rel[1024];

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%s/gid_attrs/ndevs/0",
		 dev, port);
	if (read_line(out, len, rel) == 0)
		return 1;
	snprintf(rel, sizeof(rel), "class/infiniband/%s/parent", dev);
	if (read_line(out, len, rel) == 0)
		return 1;
	return netdev_by_link(dev, port, out, len);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of a directory (names not starting with '.'). */
static size_t list_dir(const char *path, char ***names)
{
	struct dirent *d;
	size_t n = 0;
	char **v = NULL, **bigger;
	DIR *dir = opendir(path);

	*names = NULL;
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		bigger = realloc(v, (n + 1) * sizeof(*v));
		if (!bigger)
			break;
		v = bigger;
		v[n] = strdup(d->d_name);
		if (v[n])
			n++;
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	*names = v;
	return n;
}

static void free_list(char **v, size_t n)
{
	while (n)
		free(v[--n]);
	free(v);
}

int datinfo_conf(void)
{
	char path[1024], rel[1024], **devs, **ports;
	size_t ndevs, nports, i, j;
	int lines = 0, iwarps = 0;

	printf("# dat.conf lines for this host, printed by datinfo --conf.\n"
	       "# Review them, then add them to libdat's own dat.conf "
	       "(datinfo shows which file that is).\n");
	snprintf(path, sizeof(path), "%s/class/infiniband", sysfs());
	ndevs = list_dir(path, &devs);
	for (i = 0; i < ndevs; i++) {
		/* name: the u1.2 entry's, as OpenFabrics' 1.2 dat.conf named
		 * them; name2: the u2.0 one's, as its 2.x dat.conf does */
		char node[64] = "", name[400], name2[400];
		int iwarp;

		snprintf(rel, sizeof(rel), "class/infiniband/%s/node_type", devs[i]);
		read_line(node, sizeof(node), rel);
		/* "1: CA", "4: RNIC" (iWARP) */
		iwarp = strstr(node, "RNIC") != NULL || !strncmp(node, "4", 1);
		snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports",
			 sysfs(), devs[i]);
		nports = list_dir(path, &ports);
		for (j = 0; j < nports; j++) {
			char link[64] = "", netdev[300], addr[64];
			unsigned long ibn;
			char *end;

			if (!port_netdev(devs[i], ports[j], netdev, sizeof(netdev))) {
				printf("# %s port %s: no network interface; the "
				       "RDMA CM cannot use it\n", devs[i], ports[j]);
				continue;
			}
			if (!netdev_addr(netdev, addr, sizeof(addr))) {
				printf("# %s port %s (%s): %s has no IP address; "
				       "give it one to use it\n", devs[i], ports[j],
				       netdev, netdev);
				continue;
			}
			snprintf(rel, sizeof(rel),
				 "class/infiniband/%s/ports/%s/link_layer",
				 devs[i], ports[j]);
			read_line(link, sizeof(link), rel);
			if (iwarp) {
				if (iwarps++ == 0) {
					snprintf(name, sizeof(name), "OpenIB-iwarp");
					snprintf(name2, sizeof(name2), "ofa-v2-iwarp");
				} else {
					snprintf(name, sizeof(name), "OpenIB-iwarp-%s",
						 netdev);
					snprintf(name2, sizeof(name2),
						 "ofa-v2-iwarp-%s", netdev);
				}
			} else if (!strcmp(link, "Ethernet")) {
				snprintf(name, sizeof(name), "OpenIB-cma-roe-%s",
					 netdev);
				snprintf(name2, sizeof(name2), "ofa-v2-cma-roe-%s",
					 netdev);
			} else if (!strncmp(netdev, "ib", 2) &&
				   (ibn = strtoul(netdev + 2, &end, 10), !*end &&
				    end != netdev + 2)) {
				if (ibn == 0)
					snprintf(name, sizeof(name), "OpenIB-cma");
				else
					snprintf(name, sizeof(name), "OpenIB-cma-%lu",
						 ibn);
				snprintf(name2, sizeof(name2), "ofa-v2-%s", netdev);
			} else {
				snprintf(name, sizeof(name), "OpenIB-cma-%s", netdev);
				snprintf(name2, sizeof(name2), "ofa-v2-%s", netdev);
			}
			printf("# %s port %s, %s on %s (%s)\n", devs[i], ports[j],
			       iwarp ? "iWARP" : !strcmp(link, "Ethernet") ? "RoCE" :
			       link[0] ? link : "RDMA", netdev,
			       addr);
			printf("%s u1.2 nonthreadsafe default %s dapl.1.2 \"%s 0\" \"\"\n",
			       name, VERBS_LIB, netdev);
			printf("%s u2.0 nonthreadsafe default %s dapl.2.0 \"%s 0\" \"\"\n",
			       name2, VERBS2_LIB, netdev);
			lines++;
		}
		free_list(ports, nports);
	}
	free_list(devs, ndevs);
	if (!lines)
		printf("# no RDMA device with an IP address was found on this "
		       "host (%s/class/infiniband)\n", sysfs());
	printf("# software providers\n");
	for (i = 0; i < sizeof(software_lines) / sizeof(software_lines[0]); i++)
		printf("%s\n", software_lines[i]);
	return 0;
}
