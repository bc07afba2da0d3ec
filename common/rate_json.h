/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The members of a RATE's advice as JSON, written the same way wherever a
 * document shows what the daemon advised: rxbneckd's status (a flow's rate,
 * a past flow's last share) and rxbneck-shape's status (the advice it holds).
 */
#ifndef RXB_COMMON_RATE_JSON_H
#define RXB_COMMON_RATE_JSON_H

#include "common/json.h"
#include "rxbneck/proto.h"

/*
 * rate_bps, loss, epoch and confidence of @r, as members of the object
 * the caller has open (each caller adds its own members around them).
 */
void rate_json_advice(struct json_writer *w, const struct rxbneck_rate *r);

#endif
