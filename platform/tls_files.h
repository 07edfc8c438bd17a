// The files of a TLS configuration checked as OpenSSL reads them: each one
// readable PEM, the certificates valid now, the key the certificate's own.
// Used to say which file is wrong when a TLS handshake fails: libcurl's
// errors name no file, and a server that refuses a client certificate says
// only "bad certificate".
//
//   if (Status files = CheckTlsFiles(tls, std::chrono::system_clock::now()); !files.ok())
//     message += "; " + files.error().message;  // "client certificate /ssl/tls.crt expired on 2020-01-02
//     ..."
#pragma once

#include <chrono>
#include <string_view>

#include "engine/common/error.h"
#include "platform/http_client.h"

namespace ruleplane {

// The first problem found, in the order CA file, certificate, key;
// kInvalidArgument naming the file and its role (`side`: "client
// certificate ...", or a server's). PEM text given in place of a file (a
// kubeconfig's *-data) is not checked.
Status CheckTlsFiles(const TlsConfig& tls, std::chrono::system_clock::time_point now,
                     std::string_view side = "client");

}  // namespace ruleplane
