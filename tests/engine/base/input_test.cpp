// Tests of engine/src/base/input.cpp: the checks every untrusted text passes before it is parsed.
#include <catch2/catch.hpp>

#include <string>

#include "tally/base/error.h"
#include "tally/base/input.h"

using tally::find_invalid_utf8;
using tally::parse_decimal;
using tally::printable;

TEST_CASE("find_invalid_utf8 accepts well-formed UTF-8 and points at the first ill-formed byte") {
    CHECK_FALSE(find_invalid_utf8(""));
    CHECK_FALSE(find_invalid_utf8("plain ASCII"));
    CHECK_FALSE(find_invalid_utf8("caf\xc3\xa9 \xe2\x80\x9cq\xe2\x80\x9d \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"));
    CHECK(find_invalid_utf8("caf\xe9") == 3u);           // Latin-1 byte
    CHECK(find_invalid_utf8("ab\xc3") == 2u);            // truncated sequence
    CHECK(find_invalid_utf8("\xc0\xaf") == 0u);          // overlong '/'
    CHECK(find_invalid_utf8("\xe0\x80\xaf") == 0u);      // overlong, 3 bytes
    CHECK(find_invalid_utf8("x\xed\xa0\x80") == 1u);     // UTF-16 surrogate U+D800
    CHECK(find_invalid_utf8("\xf4\x90\x80\x80") == 0u);  // above U+10FFFF
    CHECK(find_invalid_utf8("\x80") == 0u);              // lone continuation byte
    CHECK(find_invalid_utf8("\xff") == 0u);
}

TEST_CASE("printable escapes controls, bidi overrides and bad bytes, and caps the length") {
    CHECK(printable("plain caf\xc3\xa9") == "plain caf\xc3\xa9");
    CHECK(printable("a\x1b[31mb\x07") == "a\\x1b[31mb\\x07");
    CHECK(printable("line\nnext\ttab") == "line\\nnext\\ttab");
    CHECK(printable("\x7f") == "\\x7f");
    CHECK(printable("\xc2\x9b") == "\\u009b");  // C1 CSI
    CHECK(printable("\xe2\x80\xae"
                    "abc") == "\\u202eabc");  // right-to-left override
    CHECK(printable("caf\xe9") == "caf\\xe9");
    const std::string capped = printable(std::string(1000, 'x'), 10);
    CHECK(capped == "xxxxxxxxxx... (1000 bytes)");
}

TEST_CASE("printable_message keeps the whole escaped message, note included, within the cap") {
    // issue 21: 400 right-to-left overrides (1,200 bytes) escaped to 2,400 and passed the 1,000-byte cap
    std::string overrides;
    for (int i = 0; i < 400; ++i) overrides += "\xe2\x80\xae";
    const std::string capped = tally::printable_message("format " + overrides);
    CHECK(capped.size() <= tally::kMaxMessageBytes);
    CHECK(capped.rfind("format \\u202e", 0) == 0);
    CHECK(capped.find("... (1207 bytes)") == capped.size() - std::string("... (1207 bytes)").size());
    CHECK(tally::printable_message("short \x1b") == "short \\x1b");
    CHECK(tally::printable_message(std::string(1000, 'x')) == std::string(1000, 'x'));
    CHECK(tally::printable_message(std::string(1001, 'x')).size() == 1000);
}

TEST_CASE("an InputError keeps the text after a NUL in quoted input") {
    const tally::InputError error("format", std::string("format got \"ab\0cd\"", 18));
    CHECK(std::string(error.what()) == "format got \"ab\\x00cd\"");
}

TEST_CASE("parse_decimal takes decimal and scientific notation only") {
    CHECK(parse_decimal("70e9") == 70e9);
    CHECK(parse_decimal("-1.5") == -1.5);
    CHECK(parse_decimal(".5") == 0.5);
    CHECK(parse_decimal("5.") == 5.0);
    CHECK(parse_decimal("+2E+3") == 2000.0);
    CHECK(parse_decimal("0") == 0.0);
    CHECK(parse_decimal("0e5") == 0.0);
    for (const char* bad : {"", "0x10", "0X1p3", "inf", "nan", "infinity", "1e", "e5", ".", "-", "1.2.3", " 1", "1 ",
                            "1e400", "1e-400", "1,5", "--1", "1e+", "١"}) {
        INFO(bad);
        CHECK_FALSE(parse_decimal(bad));
    }
}

TEST_CASE("json_nesting_depth counts brackets outside strings only") {
    CHECK(tally::json_nesting_depth("{}", 64) == 1);
    CHECK(tally::json_nesting_depth(R"({"a":[[1],{"b":[]}]})", 64) == 4);
    CHECK(tally::json_nesting_depth(R"({"a":"[[[[[[\"[[["})", 64) == 1);
    CHECK(tally::json_nesting_depth(std::string(1000, '['), 64) == 65);  // stops past the limit
}

TEST_CASE("parse_json_input names the field and the cause for each limit") {
    const auto field_and_message = [](const std::string& text) -> std::pair<std::string, std::string> {
        try {
            tally::parse_json_input(text, "config", "config.json");
        } catch (const tally::InputError& error) {
            return {error.field(), error.what()};
        }
        return {"", ""};
    };
    CHECK(field_and_message(std::string(tally::kMaxJsonBytes + 1, ' ')).second.find("1 MiB") != std::string::npos);
    CHECK(field_and_message("{\"a\":\"\xe9\"}").second.find("UTF-8: byte 6 (0xe9)") != std::string::npos);
    CHECK(field_and_message(std::string(65, '[') + std::string(65, ']')).second.find("deeper than 64") !=
          std::string::npos);
    CHECK(field_and_message("{\"a\":1e400}").second.find("not valid JSON") != std::string::npos);
    const auto smart = field_and_message(
        "{\xe2\x80\x9c"
        "a\xe2\x80\x9d: 1}");
    CHECK(smart.first == "config");
    CHECK(smart.second.find("at byte") != std::string::npos);
    CHECK(tally::parse_json_input(std::string(64, '[') + std::string(64, ']'), "config", "config.json").is_array());
}
