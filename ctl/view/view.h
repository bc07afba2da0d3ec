/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckctl's views: the daemon answers JSON (docs/CONTROL.md) and these
 * turn its documents into text for people, the way chronyc formats what
 * chronyd's cmdmon reports. One view per document:
 *
 *	view_status.h   `rxbneckctl status` (with view_flow.h, view_pause.h)
 *	view_measure.h  one measurement record (`rxbneckd --measure-only`,
 *	                `rxbneckctl status -v`)
 *	view_senders.h  `rxbneckctl senders`, `reload`, the version
 *	view_buffers.h  `rxbneckctl buffers` (and its section in status)
 *
 * A view reads the document with jpath.h and prints with vfmt.h, so a
 * member that is missing, null or of the wrong type prints "-" (or "not
 * measured" with the daemon's reason), never "nan", and a document from a
 * daemon of another version still shows what both know.
 *
 * The layout is chronyc's: "Label          : value" lines, a flow's lines
 * indented under it, the words first and the model's symbol beside them
 * ("receiver service rate (mu_P-Net)"); view_legend() explains the
 * symbols, and the same legend is in rxbneckctl(8).
 */
#ifndef RXB_CTL_VIEW_VIEW_H
#define RXB_CTL_VIEW_VIEW_H

#include <stdio.h>

#define VIEW_VERBOSE	1u	/* every detail the document has, and the legend */

/* Column where a label's value starts. */
#define VIEW_KEY_WIDTH	15

struct json_object;

/* "@label" padded to the value column at @indent spaces, then ": ". */
void view_key(FILE *f, int indent, const char *label);
/* Spaces up to the value column at @indent (a continuation line). */
void view_cont(FILE *f, int indent);

/* The legend of the symbols and words of the views. */
void view_legend(FILE *f);

#endif
