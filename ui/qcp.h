#pragma once

// The one place that includes QCustomPlot. Its header trips our warning flags, and its inline templates use
// `foreach`, which QT_NO_FOREACH removes: give it a range-for for the length of the include.
#pragma GCC system_header
#ifndef foreach
#define foreach(declaration, container) for (declaration : container)
#define RPCSCOPE_DEFINED_FOREACH
#endif
#include <qcustomplot.h>
#ifdef RPCSCOPE_DEFINED_FOREACH
#undef foreach
#undef RPCSCOPE_DEFINED_FOREACH
#endif
