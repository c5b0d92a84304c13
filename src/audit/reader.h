/* reader.h - reading the session logs that log.c writes, all of it: the
 * event format (events.h), times (times.h), display-safe strings and
 * summaries (format.h), the log directory (sessions.h), and lines, events,
 * the hash chain and filters (chain.h). Nothing here follows a symbolic link
 * in the log directory or accepts a session id that is a path. */
#pragma once
#include "chain.h"
#include "events.h"
#include "format.h"
#include "sessions.h"
#include "times.h"
