#pragma once
// One rule for secrets in whatever trainio shows or keeps (console, logs, results, campaign
// records, errors): the value of a key that names a secret, and a URL's user-info, are shown as
// ***. Sources redact what they know to be a value (redact_value); text of unknown make (an
// override, a command line, a message) goes through redact().

#include <string>
#include <string_view>

namespace trainio::util {

inline constexpr std::string_view kRedacted = "***";

// Whether `key` names a secret: its last dotted part holds "secret", "password", "passwd" or
// "token" in any case (secret_access_key, session_token, db_password).
bool is_secret_key(std::string_view key);

// `value` as it may be shown under `key`: *** for a secret key's value (an empty one stays
// empty), else the value with every URL's user-info replaced.
std::string redact_value(std::string_view key, std::string_view value);

// Whether `url` carries user-info ("scheme://user[:password]@host").
bool url_has_user_info(std::string_view url);

// `text` with the value of every key=value whose key names a secret (a bracketed or quoted value
// whole, else up to the next blank or quote) and every URL's user-info ("http://key:secret@host"
// -> "http://***@host") replaced by ***.
std::string redact(std::string_view text);

}  // namespace trainio::util
