/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckctl model --help (model_help.c); the options themselves are read
 * in cmd_model.c, which ctl/model.h describes with the command's other files.
 */
#ifndef RXB_CTL_MODEL_HELP_H
#define RXB_CTL_MODEL_HELP_H

/* The usage text, on stdout. */
void model_help(void);

#endif
