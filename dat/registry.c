/* The DAT registry: dat.conf entries (the static registry), the provider
 * tables that providers register (the dynamic registry), loading and
 * unloading provider libraries, and the consumer's IA handles.
 *
 * Locking: load_lock serialises everything that loads, initialises,
 * finalises or unloads a provider library (it is held across calls into a
 * provider's init and fini, which call back into dat_registry_add_provider);
 * reg_lock protects the tables and is never held across a provider call.
 * Order: load_lock before reg_lock. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dat_gen.h"

#include "conf.h"
#include "confpath.h"
#include "libdat_private.h"
#include "log.h"
#include "object_memory.h"
#include "registry.h"


/* A usable dat.conf line: udat, default. */
struct sr_entry {
	DAT_PROVIDER_INFO info;
	char *lib_path;
	char *ia_params;
	char *conf_file;
	unsigned line;
	void *dl;                     /* dlopen handle while loaded */
	DAT_PROVIDER_FINI_FUNC fini;
	unsigned open_ias;            /* IAs open through this entry */
};

/* A registered provider table. */
struct dr_entry {
	DAT_PROVIDER_INFO info;
	DAT_PROVIDER *provider;
	unsigned open_ias;
	struct sr_entry *loaded_by;   /* NULL: registered by the program */
	int announces;                /* promised: its objects lie in
				       * announced memory (libdat_private.h) */
	struct dr_entry *next;
};

enum ia_slot_state { IA_SLOT_FREE, IA_SLOT_OPEN, IA_SLOT_CLOSING };

struct ia_slot {
	enum ia_slot_state state;
	DAT_IA_HANDLE provider_ia;
	DAT_PROVIDER *provider;
	struct dr_entry *dr;
};

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t sr_once = PTHREAD_ONCE_INIT;
static struct sr_entry *sr_entries;
static size_t sr_count;
static char sr_problem[512];         /* why no dat.conf was read, if so */

static struct dr_entry *dr_list;

/* Slot 0 is never used, so a handle is never 0 (DAT_HANDLE_NULL). */
static struct ia_slot *ia_slots;
static size_t ia_nslots;

/* Registered tables, readable without a lock by every dispatching call. */
#define DAT_MAX_PROVIDERS 64
static _Atomic(const DAT_PROVIDER *) known_providers[DAT_MAX_PROVIDERS];

/* ------------------------------------------------------------------------
 * Keys */

static int info_same_key(const DAT_PROVIDER_INFO *a, const DAT_PROVIDER_INFO *b)
{
	return a->dapl_version_major == b->dapl_version_major &&
	       a->dapl_version_minor == b->dapl_version_minor &&
	       (a->is_thread_safe != 0) == (b->is_thread_safe != 0) &&
	       strcmp(a->ia_name, b->ia_name) == 0;
}

/* A name that fits DAT_PROVIDER_INFO: non-empty and NUL-terminated. */
static int info_name_ok(const char *name)
{
	return name && name[0] && memchr(name, '\0', DAT_NAME_MAX_LENGTH);
}

/* ------------------------------------------------------------------------
 * The static registry: dat.conf */

static char *read_all(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap), *bigger;

	while (buf) {
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		cap *= 2;
		bigger = realloc(buf, cap);
		if (!bigger)
			free(buf);
		buf = bigger;
	}
	*len = n;
	return buf;
}

struct conf_report {
	const char *file;
};

static void report_bad_line(void *arg, unsigned line, const char *field,
			    const char *reason)
{
	const struct conf_report *r = arg;

	/* "bad api_version: ...", but "end of line: ..." (it is not a field) */
	dat_log(DAT_LOG_ERROR, "%s:%u: %s%s: %s; line skipped", r->file, line,
		strcmp(field, "end of line") ? "bad " : "", field, reason);
}

static void sr_add(const char *file, const struct dat_conf_entry *e)
{
	struct sr_entry *s = &sr_entries[sr_count];

	memset(s, 0, sizeof(*s));
	/* Both are bounded by DAT_CONF_NAME_MAX == DAT_NAME_MAX_LENGTH. */
	memcpy(s->info.ia_name, e->ia_name, sizeof(s->info.ia_name));
	s->info.dapl_version_major = e->api_major;
	s->info.dapl_version_minor = e->api_minor;
	s->info.is_thread_safe = e->thread_safe ? DAT_TRUE : DAT_FALSE;
	s->lib_path = strdup(e->lib_path);
	s->ia_params = strdup(e->ia_params);
	s->conf_file = strdup(file);
	s->line = e->line;
	if (!s->lib_path || !s->ia_params || !s->conf_file) {
		free(s->lib_path);
		free(s->ia_params);
		free(s->conf_file);
		dat_log(DAT_LOG_ERROR, "%s:%u: out of memory; line skipped",
			file, e->line);
		return;
	}
	sr_count++;
}

/* Whether an earlier file (entries [0, before)) already gave this key
 * (name, version, thread safety): the first file read wins.  Lines of one
 * file with the same key stay: they are fallbacks, tried in order. */
static const struct sr_entry *sr_find(const struct dat_conf_entry *e,
				      size_t before)
{
	size_t i;

	for (i = 0; i < before; i++) {
		const DAT_PROVIDER_INFO *k = &sr_entries[i].info;

		if (k->dapl_version_major == e->api_major &&
		    k->dapl_version_minor == e->api_minor &&
		    (k->is_thread_safe != 0) == (e->thread_safe != 0) &&
		    !strcmp(k->ia_name, e->ia_name))
			return &sr_entries[i];
	}
	return NULL;
}

/* Reads one dat.conf into the static registry.  Returns 0 when it was
 * read, else an errno (ENOENT: there is no such file). */
static int sr_read(const char *path)
{
	struct dat_conf_entry *entries = NULL;
	struct sr_entry *bigger;
	struct conf_report report;
	const struct sr_entry *seen;
	size_t i, n = 0, len, before = sr_count;
	char *text;
	FILE *f;
	int err;

	f = dat_conf_open(path, &err);
	if (!f)
		return err;
	text = read_all(f, &len);
	err = ferror(f) ? errno : 0;
	fclose(f);
	if (err) {
		free(text);
		return err;
	}
	report.file = path;
	if (!text || dat_conf_parse(text, len, &entries, &n, report_bad_line,
				    &report) != 0) {
		free(text);
		return ENOMEM;
	}
	free(text);

	bigger = realloc(sr_entries, (sr_count + n + 1) * sizeof(*sr_entries));
	if (!bigger) {
		dat_conf_free(entries, n);
		return ENOMEM;
	}
	sr_entries = bigger;
	for (i = 0; i < n; i++) {
		if (entries[i].api_type != 'u' || !entries[i].is_default) {
			dat_log(DAT_LOG_SR, "%s:%u: %s is %s; not used", path,
				entries[i].line, entries[i].ia_name,
				entries[i].api_type != 'u' ? "a kernel (k) entry"
							   : "nondefault");
			continue;
		}
		seen = sr_find(&entries[i], before);
		if (seen) {
			dat_log(DAT_LOG_SR, "%s:%u: %s is already defined at "
				"%s:%u; not used", path, entries[i].line,
				entries[i].ia_name, seen->conf_file, seen->line);
			continue;
		}
		sr_add(path, &entries[i]);
		dat_log(DAT_LOG_SR, "%s:%u: %s u%u.%u %s -> %s", path,
			entries[i].line, entries[i].ia_name, entries[i].api_major,
			entries[i].api_minor,
			entries[i].thread_safe ? "threadsafe" : "nonthreadsafe",
			entries[i].lib_path);
	}
	dat_conf_free(entries, n);
	return 0;
}

/* DAT_OVERRIDE alone, or libdat's own file and then /etc/dat.conf
 * (confpath.h).  What went wrong is kept in sr_problem for dat_ia_open's
 * message. */
static void sr_load(void)
{
	struct dat_conf_source src[DAT_CONF_MAX_SOURCES];
	size_t i, n, read = 0, used = 0;
	int err;

	n = dat_conf_sources(src, DAT_CONF_MAX_SOURCES);
	for (i = 0; i < n; i++) {
		err = sr_read(src[i].path);
		if (!err) {
			read++;
			continue;
		}
		if (getenv("DAT_OVERRIDE")) {
			/* the user asked for this file: say so now, and
			 * never fall back to another */
			snprintf(sr_problem, sizeof(sr_problem),
				 "DAT_OVERRIDE=%s: cannot open: %s; no "
				 "providers are registered", src[i].path,
				 strerror(err));
			dat_log(DAT_LOG_ERROR, "%s", sr_problem);
			return;
		}
		if (err != ENOENT)
			dat_log(DAT_LOG_ERROR, "%s: cannot read it: %s; skipped",
				src[i].path, strerror(err));
	}
	if (read)
		return;
	used = (size_t)snprintf(sr_problem, sizeof(sr_problem),
				"no dat.conf found (looked for");
	for (i = 0; i < n && used < sizeof(sr_problem); i++)
		used += (size_t)snprintf(sr_problem + used,
					 sizeof(sr_problem) - used, " %s",
					 src[i].path);
	if (used < sizeof(sr_problem))
		snprintf(sr_problem + used, sizeof(sr_problem) - used,
			 "; set DAT_OVERRIDE to name one)");
	/* a host with no dat.conf at all is told when it opens */
	dat_log(DAT_LOG_SR, "%s", sr_problem);
}

static void sr_ensure_loaded(void)
{
	pthread_once(&sr_once, sr_load);
}

/* ------------------------------------------------------------------------
 * The dynamic registry */

static struct dr_entry *dr_find_locked(const DAT_PROVIDER_INFO *key)
{
	struct dr_entry *d;

	for (d = dr_list; d; d = d->next)
		if (info_same_key(&d->info, key))
			return d;
	return NULL;
}

/* Whether a registered provider has not promised to announce its object
 * memory: then handles in no announced range must still be read.  Called
 * whenever the registrations change; reg_lock held. */
static void unannounced_update_locked(void)
{
	struct dr_entry *d;

	for (d = dr_list; d; d = d->next)
		if (!d->announces)
			break;
	dat_object_memory_set_unannounced(d != NULL);
}

#define EXPORT __attribute__((visibility("default")))

EXPORT DAT_RETURN libdat_private_provider_announces(const DAT_PROVIDER *provider)
{
	struct dr_entry *d;
	int found = 0;

	pthread_mutex_lock(&reg_lock);
	for (d = dr_list; d; d = d->next)
		if (d->provider == provider) {
			d->announces = 1;
			found = 1;
		}
	unannounced_update_locked();
	pthread_mutex_unlock(&reg_lock);
	return found ? DAT_SUCCESS
		     : DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
}

static int known_add(const DAT_PROVIDER *p)
{
	int i, free_slot = -1;

	for (i = 0; i < DAT_MAX_PROVIDERS; i++) {
		const DAT_PROVIDER *k = atomic_load(&known_providers[i]);

		if (k == p)
			return 0;
		if (!k && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return -1;
	atomic_store(&known_providers[free_slot], p);
	return 0;
}

static void known_remove_locked(const DAT_PROVIDER *p)
{
	struct dr_entry *d;
	int i;

	for (d = dr_list; d; d = d->next)
		if (d->provider == p)
			return; /* still registered under another name */
	for (i = 0; i < DAT_MAX_PROVIDERS; i++)
		if (atomic_load(&known_providers[i]) == p)
			atomic_store(&known_providers[i], NULL);
}

int dat_provider_is_known(const DAT_PROVIDER *p)
{
	int i;

	if (!p)
		return 0;
	for (i = 0; i < DAT_MAX_PROVIDERS; i++)
		if (atomic_load_explicit(&known_providers[i],
					 memory_order_acquire) == p)
			return 1;
	return 0;
}

/* A provider's info names an entry and, in libdat2, is of DAT 2.0: only
 * 2.0 tables have the 81 slots libdat2 dispatches through. */
static int info_ok(const DAT_PROVIDER_INFO *info)
{
	if (!info || !info_name_ok(info->ia_name))
		return 0;
#if DAT_GEN == 2
	if (info->dapl_version_major != DAT_VERSION_MAJOR) {
		dat_log(DAT_LOG_ERROR, "%s u%u.%u: not a DAT %d provider; "
			"refused", info->ia_name,
			(unsigned)info->dapl_version_major,
			(unsigned)info->dapl_version_minor, DAT_VERSION_MAJOR);
		return 0;
	}
#endif
	return 1;
}

DAT_RETURN dat_registry_add_provider(const DAT_PROVIDER *provider,
				     const DAT_PROVIDER_INFO *info)
{
	struct dr_entry *d, **pp;

	if (!provider || !provider->ia_open_func)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (!info_ok(info))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);

	pthread_mutex_lock(&reg_lock);
	if (dr_find_locked(info)) {
		pthread_mutex_unlock(&reg_lock);
		dat_log(DAT_LOG_DR, "%s is already registered", info->ia_name);
		return DAT_ERROR(DAT_PROVIDER_ALREADY_REGISTERED, DAT_NO_SUBTYPE);
	}
	d = calloc(1, sizeof(*d));
	if (!d || known_add(provider) != 0) {
		pthread_mutex_unlock(&reg_lock);
		free(d);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_MEMORY);
	}
	d->info = *info;
	/* The table is only ever read; DAT 1.2 hands it to us as const. */
	d->provider = (DAT_PROVIDER *)provider;
	for (pp = &dr_list; *pp; pp = &(*pp)->next)
		;
	*pp = d;
	/* (until it promises, if it ever does) */
	unannounced_update_locked();
	pthread_mutex_unlock(&reg_lock);
	dat_log(DAT_LOG_DR, "registered %s u%u.%u", info->ia_name,
		info->dapl_version_major, info->dapl_version_minor);
	return DAT_SUCCESS;
}

/* Unlinks d; caller holds reg_lock and has checked it is not in use. */
static void dr_remove_locked(struct dr_entry *d)
{
	struct dr_entry **pp;

	for (pp = &dr_list; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	known_remove_locked(d->provider);
	free(d);
	unannounced_update_locked();
}

DAT_RETURN dat_registry_remove_provider(const DAT_PROVIDER *provider,
					const DAT_PROVIDER_INFO *info)
{
	struct dr_entry *d;

	if (!provider)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (!info_ok(info))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);

	pthread_mutex_lock(&reg_lock);
	d = dr_find_locked(info);
	if (!d || d->provider != provider) {
		pthread_mutex_unlock(&reg_lock);
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
				 DAT_NAME_NOT_REGISTERED);
	}
	if (d->open_ias) {
		pthread_mutex_unlock(&reg_lock);
		return DAT_ERROR(DAT_PROVIDER_IN_USE, DAT_NO_SUBTYPE);
	}
	dr_remove_locked(d);
	pthread_mutex_unlock(&reg_lock);
	dat_log(DAT_LOG_DR, "removed %s", info->ia_name);
	return DAT_SUCCESS;
}

/* ------------------------------------------------------------------------
 * Loading providers (load_lock held) */

static void sr_unload(struct sr_entry *s)
{
	struct dr_entry *d;

	if (s->fini)
		s->fini(&s->info);
	/* A provider that forgot to remove itself would leave a table
	 * pointing into the library we are about to unmap. */
	pthread_mutex_lock(&reg_lock);
	d = dr_find_locked(&s->info);
	if (d && d->loaded_by == s && !d->open_ias) {
		dat_log(DAT_LOG_DR, "%s did not remove %s in its fini; removed",
			s->lib_path, s->info.ia_name);
		dr_remove_locked(d);
	}
	pthread_mutex_unlock(&reg_lock);
	dlclose(s->dl);
	s->dl = NULL;
	s->fini = NULL;
}

/* Loading a provider must not change how the process handles signals.
 * Debian's libfabric pulls in libpsm_infinipath and libpsm2, whose
 * constructors take over SIGINT, SIGILL, SIGABRT, SIGBUS, SIGSEGV and
 * SIGTERM: a crashing consumer then exits 1 and leaves *.btr files
 * instead of a core, and ^C goes through their handler.  What the
 * consumer had is put back, and said (DAT_DBG_TYPE bit 0x04). */
static void signals_save(struct sigaction *sa)
{
	int i;

	for (i = 1; i < NSIG; i++)
		if (sigaction(i, NULL, &sa[i]))
			memset(&sa[i], 0, sizeof(sa[i]));
}

static void signals_restore(const struct sigaction *before, const char *lib)
{
	struct sigaction now;
	int i;

	for (i = 1; i < NSIG; i++) {
		if (sigaction(i, NULL, &now))
			continue;
		if (now.sa_handler == before[i].sa_handler &&
		    (now.sa_flags & SA_SIGINFO) == (before[i].sa_flags & SA_SIGINFO))
			continue;
		if (sigaction(i, &before[i], NULL) == 0)
			dat_log(DAT_LOG_SR, "loading %s changed the handler of signal %d "
				"(%s); the consumer's is back", lib, i, strsignal(i));
	}
}

/* Loads s's library if needed and runs its init; returns the registered
 * table for s's key, or NULL after saying why. */
static struct dr_entry *sr_try(struct sr_entry *s)
{
	DAT_PROVIDER_INIT_FUNC init;
	struct dr_entry *d;
	int loaded_now = 0;

	if (!s->dl) {
		struct sigaction saved[NSIG];

		signals_save(saved);
		dlerror();
		s->dl = dlopen(s->lib_path, RTLD_NOW | RTLD_GLOBAL);
		signals_restore(saved, s->lib_path);
		if (!s->dl) {
			dat_log(DAT_LOG_ERROR,
				"cannot load %s for \"%s\" (%s:%u): %s",
				s->lib_path, s->info.ia_name, s->conf_file,
				s->line, dlerror());
			return NULL;
		}
		loaded_now = 1;
		*(void **)&s->fini = dlsym(s->dl, "dat_provider_fini");
	}
	*(void **)&init = dlsym(s->dl, "dat_provider_init");
	if (!init) {
		dat_log(DAT_LOG_ERROR,
			"%s (for \"%s\", %s:%u) has no dat_provider_init; not a DAT provider",
			s->lib_path, s->info.ia_name, s->conf_file, s->line);
		goto fail;
	}
	init(&s->info, s->ia_params);

	pthread_mutex_lock(&reg_lock);
	d = dr_find_locked(&s->info);
	if (d && !d->loaded_by)
		d->loaded_by = s;
	pthread_mutex_unlock(&reg_lock);
	if (d)
		return d;
	dat_log(DAT_LOG_ERROR,
		"%s did not register \"%s\" (ia_params \"%s\", %s:%u)",
		s->lib_path, s->info.ia_name, s->ia_params, s->conf_file,
		s->line);
fail:
	if (loaded_now && s->open_ias == 0) {
		if (s->fini)
			s->fini(&s->info);
		dlclose(s->dl);
		s->dl = NULL;
		s->fini = NULL;
	}
	return NULL;
}

/* Says which part of the key no entry matched. */
static DAT_RETURN not_found(const DAT_PROVIDER_INFO *key, int tried)
{
	int name = 0, major = 0, minor = 0;
	struct dr_entry *d;
	size_t i;

	for (i = 0; i < sr_count; i++) {
		const DAT_PROVIDER_INFO *e = &sr_entries[i].info;

		if (strcmp(e->ia_name, key->ia_name))
			continue;
		name = 1;
		if (e->dapl_version_major != key->dapl_version_major)
			continue;
		major = 1;
		if (e->dapl_version_minor == key->dapl_version_minor)
			minor = 1;
	}
	pthread_mutex_lock(&reg_lock);
	for (d = dr_list; d; d = d->next) {
		if (strcmp(d->info.ia_name, key->ia_name))
			continue;
		name = 1;
		if (d->info.dapl_version_major != key->dapl_version_major)
			continue;
		major = 1;
		if (d->info.dapl_version_minor == key->dapl_version_minor)
			minor = 1;
	}
	pthread_mutex_unlock(&reg_lock);

	if (tried) {
		dat_log(DAT_LOG_ERROR,
			"dat_ia_open(\"%s\"): no library for it could be loaded",
			key->ia_name);
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
	}
	if (!name) {
		dat_log(DAT_LOG_ERROR, "dat_ia_open(\"%s\"): %s", key->ia_name,
			sr_problem[0] ? sr_problem
				      : "no dat.conf entry has that name");
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
	}
	if (!major) {
		dat_log(DAT_LOG_ERROR,
			"dat_ia_open(\"%s\"): no entry for DAT major version %u",
			key->ia_name, key->dapl_version_major);
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_MAJOR_NOT_FOUND);
	}
	if (!minor) {
		dat_log(DAT_LOG_ERROR,
			"dat_ia_open(\"%s\"): no entry for DAT version %u.%u",
			key->ia_name, key->dapl_version_major,
			key->dapl_version_minor);
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_MINOR_NOT_FOUND);
	}
	dat_log(DAT_LOG_ERROR,
		"dat_ia_open(\"%s\"): no %s entry for DAT %u.%u (the line must say \"%s\")",
		key->ia_name, key->is_thread_safe ? "threadsafe" : "nonthreadsafe",
		key->dapl_version_major, key->dapl_version_minor,
		key->is_thread_safe ? "threadsafe" : "nonthreadsafe");
	return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_THREAD_SAFETY_NOT_FOUND);
}

/* Finds or loads the provider for key and takes a reference on it. */
static DAT_RETURN provider_get(const DAT_PROVIDER_INFO *key,
			       struct dr_entry **out)
{
	struct dr_entry *d;
	int tried = 0;
	size_t i;

	pthread_mutex_lock(&load_lock);
	pthread_mutex_lock(&reg_lock);
	d = dr_find_locked(key);
	pthread_mutex_unlock(&reg_lock);
	for (i = 0; !d && i < sr_count; i++) {
		if (!info_same_key(&sr_entries[i].info, key))
			continue;
		tried = 1;
		d = sr_try(&sr_entries[i]);
	}
	if (!d) {
		pthread_mutex_unlock(&load_lock);
		return not_found(key, tried);
	}
	pthread_mutex_lock(&reg_lock);
	d->open_ias++;
	if (d->loaded_by)
		d->loaded_by->open_ias++;
	pthread_mutex_unlock(&reg_lock);
	pthread_mutex_unlock(&load_lock);
	*out = d;
	return DAT_SUCCESS;
}

/* Drops a reference taken by provider_get; the last one unloads. */
static void provider_put(struct dr_entry *d)
{
	struct sr_entry *s;
	int last = 0;

	pthread_mutex_lock(&load_lock);
	pthread_mutex_lock(&reg_lock);
	s = d->loaded_by;
	d->open_ias--;
	if (s && --s->open_ias == 0)
		last = 1;
	pthread_mutex_unlock(&reg_lock);
	if (last && s->dl)
		sr_unload(s);
	pthread_mutex_unlock(&load_lock);
}

/* ------------------------------------------------------------------------
 * IA handles */

static DAT_RETURN ia_slot_alloc(struct dr_entry *d, DAT_IA_HANDLE provider_ia,
				DAT_IA_HANDLE *consumer_ia)
{
	struct ia_slot *bigger;
	size_t i, n;

	pthread_mutex_lock(&reg_lock);
	for (i = 1; i < ia_nslots; i++)
		if (ia_slots[i].state == IA_SLOT_FREE)
			break;
	if (i >= ia_nslots) {
		n = ia_nslots ? ia_nslots * 2 : 64;
		if (n > DAT_IA_HANDLE_LIMIT)
			n = DAT_IA_HANDLE_LIMIT;
		bigger = n > ia_nslots ? realloc(ia_slots, n * sizeof(*bigger))
				       : NULL;
		if (!bigger) {
			pthread_mutex_unlock(&reg_lock);
			return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
					 DAT_RESOURCE_MEMORY);
		}
		memset(bigger + ia_nslots, 0,
		       (n - ia_nslots) * sizeof(*bigger));
		ia_slots = bigger;
		i = ia_nslots ? ia_nslots : 1;
		ia_nslots = n;
	}
	ia_slots[i].state = IA_SLOT_OPEN;
	ia_slots[i].provider_ia = provider_ia;
	ia_slots[i].provider = d->provider;
	ia_slots[i].dr = d;
	pthread_mutex_unlock(&reg_lock);
	*consumer_ia = (DAT_IA_HANDLE)(uintptr_t)i;
	return DAT_SUCCESS;
}

/* The open slot for a consumer handle; reg_lock held. */
static struct ia_slot *ia_slot_find_locked(DAT_IA_HANDLE h)
{
	size_t i = (size_t)(uintptr_t)h;

	if (i == 0 || i >= ia_nslots || ia_slots[i].state != IA_SLOT_OPEN)
		return NULL;
	return &ia_slots[i];
}

int dat_ia_resolve(DAT_IA_HANDLE consumer_ia, DAT_IA_HANDLE *provider_ia,
		   DAT_PROVIDER **provider)
{
	struct ia_slot *s;

	pthread_mutex_lock(&reg_lock);
	s = ia_slot_find_locked(consumer_ia);
	if (s) {
		*provider_ia = s->provider_ia;
		*provider = s->provider;
	}
	pthread_mutex_unlock(&reg_lock);
	return s != NULL;
}

DAT_HANDLE dat_ia_to_consumer(DAT_HANDLE h)
{
	size_t i;

	if (!h || dat_is_ia_handle_value(h))
		return h;
	pthread_mutex_lock(&reg_lock);
	for (i = 1; i < ia_nslots; i++) {
		if (ia_slots[i].state != IA_SLOT_FREE &&
		    ia_slots[i].provider_ia == h) {
			h = (DAT_HANDLE)(uintptr_t)i;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return h;
}

/* ------------------------------------------------------------------------
 * The registry calls */

DAT_RETURN dat_ia_openv(const DAT_NAME_PTR name, DAT_COUNT async_evd_qlen,
			DAT_EVD_HANDLE *async_evd_handle,
			DAT_IA_HANDLE *ia_handle, DAT_UINT32 dapl_major,
			DAT_UINT32 dapl_minor, DAT_BOOLEAN thread_safety)
{
	DAT_PROVIDER_INFO key;
	DAT_IA_HANDLE provider_ia = NULL;
	struct dr_entry *d;
	DAT_RETURN rc;

	if (!name || !memchr(name, '\0', DAT_NAME_MAX_LENGTH) || !name[0])
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (!async_evd_handle)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (!ia_handle)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	/* A line of the other generation names a library whose table has
	 * other slots and signatures (70 in 1.2, 81 in 2.0), linked against
	 * the other libdat: never loaded, whichever libdat this is. */
	if (dapl_major != DAT_VERSION_MAJOR) {
		dat_log(DAT_LOG_ERROR, "dat_ia_open(\"%s\"): %s opens DAT %d "
			"entries only, not %u.%u", name,
			DAT_VERSION_MAJOR == 2 ? "libdat2" : "libdat",
			DAT_VERSION_MAJOR, (unsigned)dapl_major,
			(unsigned)dapl_minor);
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_MAJOR_NOT_FOUND);
	}

	sr_ensure_loaded();
	memset(&key, 0, sizeof(key));
	strcpy(key.ia_name, name);
	key.dapl_version_major = dapl_major;
	key.dapl_version_minor = dapl_minor;
	key.is_thread_safe = thread_safety ? DAT_TRUE : DAT_FALSE;

	rc = provider_get(&key, &d);
	if (rc != DAT_SUCCESS)
		return rc;
	rc = d->provider->ia_open_func(name, async_evd_qlen, async_evd_handle,
				       &provider_ia);
	if (rc != DAT_SUCCESS) {
		dat_log(DAT_LOG_PROVIDER_API,
			"dat_ia_open(\"%s\"): the provider's open failed: 0x%x",
			name, (unsigned)rc);
		provider_put(d);
		return rc;
	}
	rc = ia_slot_alloc(d, provider_ia, ia_handle);
	if (rc != DAT_SUCCESS) {
		d->provider->ia_close_func(provider_ia, DAT_CLOSE_ABRUPT_FLAG);
		provider_put(d);
	}
	return rc;
}

DAT_RETURN dat_ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS close_flags)
{
	DAT_IA_HANDLE provider_ia;
	DAT_PROVIDER *provider;
	struct ia_slot *s;
	struct dr_entry *d;
	DAT_RETURN rc;

	pthread_mutex_lock(&reg_lock);
	s = ia_slot_find_locked(ia_handle);
	if (!s) {
		pthread_mutex_unlock(&reg_lock);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	}
	if (close_flags != DAT_CLOSE_ABRUPT_FLAG &&
	    close_flags != DAT_CLOSE_GRACEFUL_FLAG) {
		pthread_mutex_unlock(&reg_lock);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	/* CLOSING keeps a second close of the same handle from racing us. */
	s->state = IA_SLOT_CLOSING;
	provider_ia = s->provider_ia;
	provider = s->provider;
	d = s->dr;
	pthread_mutex_unlock(&reg_lock);

	rc = provider->ia_close_func(provider_ia, close_flags);

	pthread_mutex_lock(&reg_lock);
	/* ia_slots may have moved while unlocked: index afresh. */
	s = &ia_slots[(size_t)(uintptr_t)ia_handle];
	if (rc == DAT_SUCCESS)
		memset(s, 0, sizeof(*s));
	else
		s->state = IA_SLOT_OPEN;
	pthread_mutex_unlock(&reg_lock);
	if (rc == DAT_SUCCESS)
		provider_put(d);
	return rc;
}

/* Appends info to the consumer's list unless an earlier entry has its key. */
static void list_add(const DAT_PROVIDER_INFO *info, DAT_PROVIDER_INFO **seen,
		     DAT_COUNT *n)
{
	DAT_COUNT i;

	for (i = 0; i < *n; i++)
		if (info_same_key(seen[i], info))
			return;
	seen[(*n)++] = (DAT_PROVIDER_INFO *)info;
}

DAT_RETURN dat_registry_list_providers(DAT_COUNT max_to_return,
				       DAT_COUNT *entries_returned,
				       DAT_PROVIDER_INFO *(dat_provider_list[]))
{
	DAT_PROVIDER_INFO **all;
	struct dr_entry *d;
	DAT_COUNT n = 0, i, ndr = 0;
	size_t k;

	if (max_to_return < 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (!entries_returned)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (max_to_return > 0 && !dat_provider_list)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	for (i = 0; i < max_to_return; i++)
		if (!dat_provider_list[i])
			return DAT_ERROR(DAT_INVALID_PARAMETER,
					 DAT_INVALID_ARG3);

	sr_ensure_loaded();
	pthread_mutex_lock(&reg_lock);
	for (d = dr_list; d; d = d->next)
		ndr++;
	all = malloc((sr_count + (size_t)ndr + 1) * sizeof(*all));
	if (!all) {
		pthread_mutex_unlock(&reg_lock);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_MEMORY);
	}
	/* dat.conf order first, then what the program registered itself. */
	for (k = 0; k < sr_count; k++)
		list_add(&sr_entries[k].info, all, &n);
	for (d = dr_list; d; d = d->next)
		list_add(&d->info, all, &n);
	for (i = 0; i < n && i < max_to_return; i++)
		*dat_provider_list[i] = *all[i];
	pthread_mutex_unlock(&reg_lock);
	free(all);

	if (max_to_return == 0) {
		/* DAT 1.2: max 0 asks for the count, and is an error. */
		*entries_returned = n;
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	}
	*entries_returned = i;
	return DAT_SUCCESS;
}
