/* Stubs for the four ggml functions that ggml-quants.c calls, so that it compiles on its own
 * into a shared library for tests/golden/generate_formats.py. None of them is reached by the
 * reference quantizers and dequantizers the generator calls (quantize_row_*_ref,
 * dequantize_row_*); ggml_abort stops loudly if anything asserts. */
#include <stdio.h>
#include <stdlib.h>
#include "ggml.h"

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    (void) fmt;
    fprintf(stderr, "ggml_abort at %s:%d\n", file, line);
    abort();
}

size_t ggml_type_size(enum ggml_type type) { (void) type; return 0; }

size_t ggml_row_size(enum ggml_type type, int64_t ne) { (void) type; (void) ne; return 0; }

const char * ggml_type_name(enum ggml_type type) { (void) type; return "?"; }
