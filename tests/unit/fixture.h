/* The unit tests' fixtures: a file read whole. */
#ifndef UMADFS_TEST_FIXTURE_H
#define UMADFS_TEST_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

/* dir/name's bytes, NUL-terminated, *len their count; exits 2 when it
 * cannot be read. */
static inline char *fixture_read(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		exit(2);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

#endif
