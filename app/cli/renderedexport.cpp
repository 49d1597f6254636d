#include "renderedexport.h"

#include "compare/comparison.h"
#include "htmlreport.h"

#include <QBuffer>
#include <QImage>

#include <cstring>

namespace rpcscope::cli {

bool isRenderedFormat(ExportFormat format)
{
    return format == ExportFormat::Html || format == ExportFormat::Png || format == ExportFormat::Pdf
        || format == ExportFormat::Svg;
}

std::optional<ChartKind> parseChartKind(const QString &name)
{
    const QString n = name.toLower();
    if (n.isEmpty() || n == u"histogram")
        return ChartKind::Histogram;
    if (n == u"spectrum" || n == u"percentiles")
        return ChartKind::Spectrum;
    if (n == u"timeline" || n == u"latency")
        return ChartKind::Timeline;
    if (n == u"throughput")
        return ChartKind::Throughput;
    return std::nullopt;
}

bool wantsRenderedFormat(int argc, char *argv[])
{
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "-O") != 0 && std::strcmp(argv[i], "--output-format") != 0
            && std::strcmp(argv[i], "--format") != 0)
            continue;
        const std::optional<ExportFormat> format = parseExportFormat(QString::fromLocal8Bit(argv[i + 1]));
        if (format && isRenderedFormat(*format))
            return true;
    }
    return false;
}

QByteArray renderExport(const QList<RunRecord> &runs, ExportFormat format, ChartKind chart, QString *error)
{
    QList<const RunRecord *> pointers;
    for (const RunRecord &r : runs)
        pointers << &r;
    if (pointers.isEmpty()) {
        *error = QStringLiteral("no run to render");
        return {};
    }
    ChartOptions options;
    switch (format) {
    case ExportFormat::Html:
        if (pointers.size() == 1)
            return htmlReport(*pointers.first());
        return htmlComparisonReport(pointers, compareRuns(runs[0].snapshot, runs[1].snapshot));
    case ExportFormat::Png: {
        options.scale = 2.0;
        const QImage image = renderChartImage(pointers, chart, options);
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        if (image.isNull() || !image.save(&buffer, "PNG")) {
            *error = QStringLiteral("the chart could not be drawn");
            return {};
        }
        return png;
    }
    case ExportFormat::Svg:
        return renderChartSvg(pointers, chart, options);
    case ExportFormat::Pdf:
        return renderChartPdf(pointers, chart, options, error);
    default:
        *error = QStringLiteral("%1 is not drawn").arg(exportFormatName(format));
        return {};
    }
}

} // namespace rpcscope::cli
