// SPDX-License-Identifier: MIT
/** @file
 *  @brief `main` of the build-time generator of one model: `nhvk_codegen_<model> OUT.hpp` derives the model's
 *         equations (derive.hpp) and writes the header that specializes `nhvk::Generated<M>` (emit.hpp).
 *         CMake writes one tiny source per model that calls `codegen_main<M>`, so editing one model regenerates and
 *         recompiles that model alone.
 */
#pragma once

#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <string>

#include "derive.hpp"
#include "emit.hpp"

namespace nhvk::sym {

template <class M> int codegen_main(int argc, char** argv, const char* cpp_type, const char* header) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT.hpp   (writes the generated equations of %s)\n", argv[0], cpp_type);
        return 2;
    }
    const std::string out = argv[1], tmp = out + ".tmp";
    try {
        Graph g;
        const DerivedModel d = derive<M>(g, cpp_type, header);
        const std::string text = emit_header(g, d);
        // NOTE: an unchanged header is not rewritten, so that a change of the generator that emits the same code
        // recompiles nothing downstream.
        {
            std::ifstream old(out);
            const std::string previous((std::istreambuf_iterator<char>(old)), std::istreambuf_iterator<char>());
            if (old && previous == text) return 0;
        }
        {
            std::ofstream f(tmp, std::ios::out | std::ios::trunc);
            f << text;
            f.flush();
            if (!f) throw std::runtime_error("cannot write '" + tmp + "'");
        }
        if (std::rename(tmp.c_str(), out.c_str()) != 0) throw std::runtime_error("cannot rename '" + tmp + "'");
    } catch (const std::exception& e) {
        std::remove(tmp.c_str());
        std::fprintf(stderr, "nhvk-codegen: %s (%s): %s\n", cpp_type, header, e.what());
        return 1;
    }
    return 0;
}

} // namespace nhvk::sym
