// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: reading the CSV files nhvk writes (stats.csv, samples.csv, trajectories) by column name.
 */
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nhvk_test {

/** @brief Fields of one CSV line; a trailing comma gives a trailing empty field. */
inline std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> out;
    std::string item;
    std::stringstream ss(line);
    while (std::getline(ss, item, ',')) out.push_back(item);
    if (!line.empty() && line.back() == ',') out.emplace_back();
    return out;
}

/** @brief A CSV table: header, header → column index, rows of fields. */
struct Csv {
    std::vector<std::string> header;
    std::map<std::string, std::size_t> col;
    std::vector<std::vector<std::string>> rows;
    const std::string& at(std::size_t r, const std::string& name) const {
        const auto it = col.find(name);
        if (it == col.end()) throw std::out_of_range("no column " + name);
        return rows.at(r).at(it->second);
    }
};

inline Csv parse_csv(std::istream& in) {
    Csv c;
    std::string line;
    if (!std::getline(in, line)) return c;
    c.header = split_csv_line(line);
    for (std::size_t i = 0; i < c.header.size(); ++i) c.col[c.header[i]] = i;
    while (std::getline(in, line))
        if (!line.empty()) c.rows.push_back(split_csv_line(line));
    return c;
}

inline Csv parse_csv(const std::string& text) {
    std::stringstream in(text);
    return parse_csv(in);
}

inline Csv read_csv(const std::filesystem::path& p) {
    std::ifstream in(p);
    return parse_csv(in);
}

} // namespace nhvk_test
