#include "renderedexport.h"

#include "compare/comparison.h"
#include "compare/sequentialab.h"
#include "htmlreport.h"
#include "sliderender.h"
#include "util/inputfile.h"

#include <QBuffer>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstring>

namespace rpcscope::cli {

bool isRenderedFormat(ExportFormat format)
{
    return format == ExportFormat::Html || format == ExportFormat::Png || format == ExportFormat::Pdf
        || format == ExportFormat::Svg || isSlideFormat(format);
}

bool isSlideFormat(ExportFormat format)
{
    return format == ExportFormat::SlidePng || format == ExportFormat::SlidePdf;
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
    if (n == u"message-histogram" || n == u"messages")
        return ChartKind::MessageHistogram;
    return std::nullopt;
}

namespace {

/// Whether the scenario document at @p path asks for a drawn export (output.exports[].format); a document that
/// cannot be read says nothing here: the command reads it again and says what is wrong.
bool documentWantsRenderedFormat(const QString &path)
{
    const std::optional<QByteArray> text = readInputFile(path, inputlimits::kDocument, nullptr);
    if (!text)
        return false;
    const QJsonArray exports = QJsonDocument::fromJson(*text)
                                   .object()
                                   .value(QStringLiteral("output"))
                                   .toObject()
                                   .value(QStringLiteral("exports"))
                                   .toArray();
    for (const auto &e : exports) {
        const std::optional<ExportFormat> format
            = parseExportFormat(e.toObject().value(QStringLiteral("format")).toString());
        if (format && isRenderedFormat(*format))
            return true;
    }
    return false;
}

} // namespace

bool wantsRenderedFormat(int argc, char *argv[])
{
    for (int i = 1; i < argc; ++i) { // a document's own exports (run --scenario FILE, --scenario=FILE)
        const char *value = std::strncmp(argv[i], "--scenario=", 11) == 0 ? argv[i] + 11
            : std::strcmp(argv[i], "--scenario") == 0 && i + 1 < argc     ? argv[i + 1]
                                                                          : nullptr;
        if (value && documentWantsRenderedFormat(QString::fromLocal8Bit(value)))
            return true;
    }
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

ChartsByOutput chartsByOutput(const QCommandLineParser &parser)
{
    ChartsByOutput charts;
    const QStringList values = parser.values(QStringLiteral("chart"));
    qsizetype chart = 0;
    qsizetype outputs = 0; // -o given so far
    QString previous;
    for (const QString &option : parser.optionNames()) {
        const bool output = option == u"o" || option == u"output";
        if (output)
            ++outputs;
        else if (option == u"chart" && chart < values.size()) {
            const QString &value = values.at(chart++);
            if ((previous == u"o" || previous == u"output") && !charts.own.contains(outputs - 1))
                charts.own.insert(outputs - 1, value);
            else
                charts.others = value;
        }
        previous = option;
    }
    return charts;
}

bool parseChartOptions(const QString &size, const QString &scale, ChartOptions *options, QString *error)
{
    options->scale = 2.0;
    if (!size.isEmpty()) {
        const QStringList parts = size.toLower().split(u'x');
        bool okW = false;
        bool okH = false;
        const int w = parts.value(0).toInt(&okW);
        const int h = parts.value(1).toInt(&okH);
        if (parts.size() != 2 || !okW || !okH || w < 200 || h < 150 || w > 10000 || h > 10000) {
            *error = QStringLiteral("--chart-size: expected WIDTHxHEIGHT from 200x150 to 10000x10000, got \"%1\"")
                         .arg(size);
            return false;
        }
        options->width = w;
        options->height = h;
    }
    if (!scale.isEmpty()) {
        bool ok = false;
        options->scale = scale.toDouble(&ok);
        if (!ok || !(options->scale >= 0.5 && options->scale <= 8)) { // NaN fails both
            *error = QStringLiteral("--chart-scale: expected a number from 0.5 to 8, got \"%1\"").arg(scale);
            return false;
        }
    }
    return true;
}

QByteArray renderExport(const QList<RunRecord> &runs, ExportFormat format, ChartKind chart,
    const ChartOptions &chartOptions, QString *error, int slidePage)
{
    QList<const RunRecord *> pointers;
    for (const RunRecord &r : runs)
        pointers << &r;
    if (pointers.isEmpty()) {
        *error = QStringLiteral("no run to render");
        return {};
    }
    ChartOptions options = chartOptions;
    switch (format) {
    case ExportFormat::Html:
        if (pointers.size() == 1)
            return htmlReport(*pointers.first());
        return htmlComparisonReport(pointers, compareRuns(runs[0].snapshot, runs[1].snapshot));
    case ExportFormat::Png: {
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
        options.scale = 1.0; // vector: the size is what matters
        return renderChartSvg(pointers, chart, options);
    case ExportFormat::Pdf:
        options.scale = 1.0;
        return renderChartPdf(pointers, chart, options, error);
    case ExportFormat::SlidePng:
    case ExportFormat::SlidePdf: {
        if (runs.size() != 2) {
            *error = QStringLiteral("-O %1 compares two runs (the baseline, then the candidate); %2 given")
                         .arg(exportFormatName(format))
                         .arg(runs.size());
            return {};
        }
        SlideSpec spec = makeSlideSpec(runs[0], runs[1], compareRuns(runs[0].snapshot, runs[1].snapshot));
        // An A/B run judged until decided leads with that verdict, as the GUI's slide does.
        if (const std::optional<SequentialAb> judged = sequentialVerdictOf(runs[0], runs[1]))
            leadWithSequentialVerdict(&spec, judged->verdictLine(QStringLiteral("the run ended")));
        spec.distribution = chart == ChartKind::Spectrum ? ChartKind::Spectrum : ChartKind::Histogram;
        const Slide slide(std::move(spec));
        if (format == ExportFormat::SlidePdf)
            return slide.toPdf(error);
        return slidePage < slide.pageCount() ? slide.toPng(options.scale, error, slidePage) : QByteArray();
    }
    default:
        *error = QStringLiteral("%1 is not drawn").arg(exportFormatName(format));
        return {};
    }
}

} // namespace rpcscope::cli
