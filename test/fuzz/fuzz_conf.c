/*
 * libFuzzer target for the dat.conf parser.
 *
 *   clang -g -fsanitize=fuzzer,address,undefined -Idat \
 *	test/fuzz/fuzz_conf.c dat/conf.c -o fuzz_conf
 *   ./fuzz_conf test/fuzz/corpus/conf
 *
 * Besides memory errors (the sanitizers), it traps when the output breaks
 * the promises of conf.h: well-formed entries, one report per bad line, at
 * most one outcome (entry or error) per line, lines in increasing order.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define CHECK(cond)                      \
	do {                             \
		if (!(cond))             \
			__builtin_trap(); \
	} while (0)

static const char *const field_names[] = {
	"ia_name", "api_version", "thread_safety", "default", "lib_path",
	"provider_version", "ia_params", "platform_params", "end of line",
};

struct reports {
	unsigned *line;
	size_t n;
	size_t cap;
	unsigned max_line;
};

static void on_error(void *arg, unsigned line, const char *field,
		     const char *reason)
{
	struct reports *r = arg;
	size_t i;
	int known = 0;

	CHECK(field && reason && reason[0]);
	for (i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
		if (strcmp(field, field_names[i]) == 0)
			known = 1;
	CHECK(known);
	CHECK(line >= 1 && line <= r->max_line);
	CHECK(r->n == 0 || line > r->line[r->n - 1]);

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		unsigned *v = realloc(r->line, cap * sizeof(*v));

		if (!v)
			abort();
		r->line = v;
		r->cap = cap;
	}
	r->line[r->n++] = line;
}

static void check_entry(const struct dat_conf_entry *e, unsigned max_line)
{
	const char *z = memchr(e->ia_name, '\0', DAT_CONF_NAME_MAX);

	CHECK(z && z != e->ia_name);
	CHECK(e->api_type == 'u' || e->api_type == 'k');
	CHECK(e->thread_safe == 0 || e->thread_safe == 1);
	CHECK(e->is_default == 0 || e->is_default == 1);
	CHECK(e->lib_path && e->lib_path[0]);
	CHECK(e->provider_id && e->provider_id[0]);
	CHECK(e->ia_params && e->platform_params);
	CHECK(e->line >= 1 && e->line <= max_line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct reports rep = { NULL, 0, 0, 1 };
	struct dat_conf_entry *e = (struct dat_conf_entry *)1;
	struct dat_conf_entry *e2;
	size_t n = (size_t)-1, n2, i, j;

	for (i = 0; i < size; i++)
		if (text[i] == '\n' && rep.max_line < 0xffffffffu)
			rep.max_line++;

	if (dat_conf_parse(text, size, &e, &n, on_error, &rep) != 0) {
		CHECK(e == NULL && n == 0);
		free(rep.line);
		return 0;
	}
	CHECK((n == 0) == (e == NULL));
	CHECK(n + rep.n <= rep.max_line);

	/* entries in file order; no line both accepted and reported */
	for (i = 0, j = 0; i < n; i++) {
		check_entry(&e[i], rep.max_line);
		CHECK(i == 0 || e[i].line > e[i - 1].line);
		while (j < rep.n && rep.line[j] < e[i].line)
			j++;
		CHECK(j == rep.n || rep.line[j] != e[i].line);
	}

	/* the callback is optional and must not change the outcome */
	if (dat_conf_parse(text, size, &e2, &n2, NULL, NULL) == 0) {
		CHECK(n2 == n);
		for (i = 0; i < n; i++) {
			CHECK(e2[i].line == e[i].line);
			CHECK(strcmp(e2[i].lib_path, e[i].lib_path) == 0);
		}
		dat_conf_free(e2, n2);
	}

	dat_conf_free(e, n);
	free(rep.line);
	return 0;
}
