// Enum <-> name tables: each name is written once and read both ways (a to_string and its *_from_string).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace tally {

template <class E>
struct Named {
    E value;
    const char* name;
};

// The name of `value` in `table`; `fallback` for a value the table lacks.
template <class E, std::size_t N>
constexpr const char* name_of(const Named<E> (&table)[N], E value, const char* fallback) {
    for (const Named<E>& entry : table)
        if (entry.value == value) return entry.name;
    return fallback;
}

// The value named `text`; nullopt when no entry has that name (the caller's error lists the names).
template <class E, std::size_t N>
constexpr std::optional<E> value_named(const Named<E> (&table)[N], std::string_view text) {
    for (const Named<E>& entry : table)
        if (text == entry.name) return entry.value;
    return std::nullopt;
}

}  // namespace tally
