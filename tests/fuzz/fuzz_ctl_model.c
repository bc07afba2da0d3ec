// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for rxbneckctl model --from-status: the reader of a
 * flow's solved inputs in the daemon's status document
 * (model_live_from_doc(), ctl/model_live.c). The first two bytes are the
 * port asked for (little-endian), the rest the document's JSON.
 *
 * Properties besides "no crash, no leak, no sanitizer report": a document
 * read without complaint gives inputs the solver's own checks take
 * (bneck_check_inputs()), so that a what-if never starts from numbers the
 * solver would refuse with no key named, nor do the windows by rate
 * (each piece's stage B, at increasing rates); and the flow read is the
 * one asked for.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/model.h"
#include "solver/bneck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok;
	struct json_object *doc;
	struct model_args a;
	uint16_t port;

	if (size < 2 || size > 1 << 20)
		return 0;
	port = (uint16_t)(data[0] | data[1] << 8);
	tok = json_tokener_new();
	if (!tok)
		return 0;
	doc = json_tokener_parse_ex(tok, (const char *)data + 2, (int)(size - 2));
	json_tokener_free(tok);
	if (!doc)
		return 0;
	memset(&a, 0, sizeof(a));
	a.x.points = 200;
	if (model_live_from_doc(&a, doc, port) == CTL_EXIT_OK) {
		struct rxb_stage_inputs path[2] = { a.front, a.stage };

		if (!a.live.used || a.live.port != port)
			abort();
		/* Path order: stage A, when there is one, before B. */
		if (bneck_check_inputs(a.has_front ? path : path + 1, a.has_front ? 2 : 1, &a.x))
			abort();
		if (a.nbands == 1 || a.nbands > BNECK_MAX_PIECES)
			abort();
		for (uint32_t j = 0; j < a.nbands; j++) {
			path[1] = a.stage;
			bneck_piece_windows(&path[1], &a.band_win[j]);
			if ((j && !(a.band_at_bps[j] > a.band_at_bps[j - 1])) ||
			    bneck_check_inputs(a.has_front ? path : path + 1,
					       a.has_front ? 2 : 1, &a.x))
				abort();
		}
	}
	json_object_put(doc);
	return 0;
}
