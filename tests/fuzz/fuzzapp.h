#pragma once

// What every fuzzer here shares: a QCoreApplication (some of core's Qt code wants one, e.g. for QStandardPaths and
// text codecs), made once in LLVMFuzzerInitialize, before the first input.

#include <QCoreApplication>

#include <cstddef>
#include <cstdint>

namespace rpcscope::fuzz {

inline void makeApplication(int *argc, char ***argv)
{
    // libFuzzer's argv lives as long as the process does, as QCoreApplication requires.
    static QCoreApplication app(*argc, *argv);
    QCoreApplication::setApplicationName(QStringLiteral("rpcscope-fuzz"));
}

} // namespace rpcscope::fuzz

#define RPCSCOPE_FUZZ_INITIALIZE_QT                                                                                    \
    extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)                                                       \
    {                                                                                                                  \
        rpcscope::fuzz::makeApplication(argc, argv);                                                                   \
        return 0;                                                                                                      \
    }
