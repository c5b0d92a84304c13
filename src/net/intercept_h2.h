/* intercept_h2.h - the HTTP/2 side of the bridge (intercept.h): a
 * connection whose client and server both agreed to h2 by ALPN. An nghttp2
 * server session faces the client, an nghttp2 client session the server;
 * each client stream becomes one upstream stream. Each request's header
 * list is handed to on_head as an HTTP/1.1 head ("METHOD PATH HTTP/1.1",
 * Host from :authority, the other fields; checked by the origin-mode parser
 * of http.h: Host must name the destination) and the head it returns is
 * mapped back to a header list (:method, :scheme, :authority from Host,
 * :path; names in lower case; connection-specific fields dropped). Request
 * DATA goes through on_data; response DATA through on_resp, per stream and
 * per DATA frame, in place, and each response field as a line "name:
 * value\r\n" (1xx and trailers not). on_resp's hold-back is not used:
 * nothing is held, so a string that on_resp rewrites (a secret echoed back)
 * is missed when the server splits it across two DATA frames. A refusal answers that stream alone: 403 (the parser's status
 * for a malformed head, 500 for a rewrite that changes its method or
 * framing) when no response began, RST_STREAM otherwise, and the upstream
 * stream is reset; the other streams go on. Flow control end to end (a
 * side's window opens as the other side takes the bytes), RST_STREAM both
 * ways, GOAWAY from the server passed on (new streams refused), trailers
 * relayed. Results as for HTTP/1.1: requests = streams sent upstream,
 * first_status, bytes_in / bytes_out = bytes written to the client /
 * upstream (HTTP/2 frames). */
#pragma once
#include <openssl/ssl.h>

#include "intercept.h"

/* Run the relay until the connection ends: both SSLs after their
 * handshakes, non-blocking fds. Leaves the SSLs and fds to the caller. */
void intercept_h2_relay(struct intercept_job *job, SSL *client, int client_fd, SSL *upstream,
			int upstream_fd);
