#include "resultscontroller.h"

#include "abcontroller.h"
#include "backgroundjob.h"
#include "chartrender.h"
#include "comparepage.h"
#include "export/exporter.h"
#include "historypage.h"
#include "htmlreport.h"
#include "presentationview.h"
#include "runcontroller.h"
#include "runpage.h"
#include "runrecorder.h"
#include "store/runstore.h"
#include "store/segmentmerge.h"
#include "util/units.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>
#include <QRegularExpression>
#include <QTabWidget>

namespace rpcscope {

namespace {

struct ReadRuns {
    QList<RunRecord> runs;
    QString error;
};

/// Whole runs @p ids of the history at @p path, read on the calling thread (Qt SQL connections are per thread).
ReadRuns readRuns(const QString &path, const QList<qint64> &ids)
{
    ReadRuns read;
    RunStore store;
    if (!store.open(path, &read.error, RunStore::OpenMode::ReadOnly))
        return read;
    for (const qint64 id : ids) {
        std::optional<RunRecord> run = store.load(id, &read.error);
        if (!run)
            return { {}, read.error };
        read.runs << std::move(*run);
    }
    return read;
}

struct ImportedReports {
    int imported = 0;
    QStringList problems; ///< "FILE: why" for each file not imported
    QList<qint64> merged; ///< runs merged from the segments of a split run
};

/**
 * Reads ghz or rpcscope JSON reports (files, or folders of *.json) and adds them to the history at @p path, on the
 * calling thread. The segments of a split run (run --segment I/N) are merged into one run, as `rpcscope-cli merge`
 * does; a merge with segments missing is kept, marked partial, and said so.
 */
ImportedReports importReportFiles(const QString &path, const QStringList &inputs)
{
    ImportedReports done;
    RunStore store;
    QString error;
    const bool open = store.open(path, &error);
    QStringList empty;
    const QStringList files = jsonFilesOf(inputs, &empty);
    for (const QString &folder : empty)
        done.problems << QObject::tr("%1: no *.json reports in this folder").arg(folder);
    std::map<std::pair<QString, int>, QList<SegmentReport>> segments; // by plan and worker count
    for (const QString &file : files) {
        QString why = error;
        std::optional<RunRecord> run = open ? importRunFile(file, &why) : std::nullopt;
        if (run && run->split.isSplit() && run->split.workers.size() == 1) {
            segments[{ run->split.planId, run->split.count }].append({ file, std::move(*run) });
            continue;
        }
        if (!run || store.addRun(*run, &why) == 0) {
            done.problems << QStringLiteral("%1: %2").arg(file, why);
            continue;
        }
        ++done.imported;
    }
    for (const auto &[plan, reports] : segments) {
        QString why;
        std::optional<RunRecord> merged = mergeSegments(reports, true, &why);
        const qint64 id = merged ? store.addRun(*merged, &why) : 0;
        if (id == 0) {
            done.problems << why;
            continue;
        }
        if (merged->split.partial) {
            QStringList missing;
            for (int i : merged->split.missing)
                missing << QStringLiteral("%1/%2").arg(i).arg(plan.second);
            done.problems << QObject::tr("Merged %1 of %2 segments as run #%3, marked partial: %4 missing")
                                 .arg(reports.size())
                                 .arg(plan.second)
                                 .arg(id)
                                 .arg(missing.join(QStringLiteral(", ")));
        }
        done.merged << id;
        ++done.imported;
    }
    return done;
}

/// The formats File > Export offers, as file dialog filters, with the format each stands for.
const QList<QPair<QString, QString>> &exportFilters(bool comparison)
{
    static const QList<QPair<QString, QString>> run {
        { QObject::tr("HTML report (*.html)"), QStringLiteral("html") },
        { QObject::tr("Chart as PNG (*.png)"), QStringLiteral("png") },
        { QObject::tr("Chart as PDF (*.pdf)"), QStringLiteral("pdf") },
        { QObject::tr("Chart as SVG (*.svg)"), QStringLiteral("svg") },
        { QObject::tr("CSV summary (*.csv)"), QStringLiteral("csv") },
        { QObject::tr("CSV histogram buckets (*.csv)"), QStringLiteral("csv-histogram") },
        { QObject::tr("CSV time series (*.csv)"), QStringLiteral("csv-timeline") },
        { QObject::tr("CSV raw samples (*.csv)"), QStringLiteral("csv-raw") },
        { QObject::tr("rpcscope JSON report (*.json)"), QStringLiteral("json") },
        { QObject::tr("ghz JSON report (*.json)"), QStringLiteral("ghz-json") },
        { QObject::tr("HdrHistogram percentiles (*.hgrm)"), QStringLiteral("hgrm") },
        { QObject::tr("Markdown table (*.md)"), QStringLiteral("markdown") },
        { QObject::tr("Text summary (*.txt)"), QStringLiteral("summary") },
    };
    static const QList<QPair<QString, QString>> compared {
        { QObject::tr("HTML comparison report (*.html)"), QStringLiteral("html") },
        { QObject::tr("Overlay chart as PNG (*.png)"), QStringLiteral("png") },
        { QObject::tr("Overlay chart as PDF (*.pdf)"), QStringLiteral("pdf") },
        { QObject::tr("Overlay chart as SVG (*.svg)"), QStringLiteral("svg") },
        { QObject::tr("Slide, 16:9 PNG 1920x1080 (*.png)"), QStringLiteral("slide-png") },
        { QObject::tr("Slide, 16:9 PNG 3840x2160 (*.png)"), QStringLiteral("slide-png-2x") },
        { QObject::tr("Slide, one-page PDF (*.pdf)"), QStringLiteral("slide-pdf") },
        { QObject::tr("Markdown table with the verdict (*.md)"), QStringLiteral("markdown") },
        { QObject::tr("CSV summary, one row per run (*.csv)"), QStringLiteral("csv") },
    };
    return comparison ? compared : run;
}

} // namespace

ResultsController::ResultsController(RunRecorder *recorder, RunController *live, RunPage *runPage, HistoryPage *history,
    ComparePage *compare, QWidget *dialogParent)
    : QObject(dialogParent)
    , m_recorder(recorder)
    , m_live(live)
    , m_runPage(runPage)
    , m_history(history)
    , m_compare(compare)
    , m_dialogParent(dialogParent)
{
    connect(m_compare, &ComparePage::comparisonChanged, this, &ResultsController::announceVerdict);
    connect(this, &ResultsController::reportsImported, this, &ResultsController::showImportOutcome);
}

void ResultsController::showLiveRun(const std::shared_ptr<RunRecord> &run, const QString &description)
{
    m_current = run;
    m_runPage->setRunName(m_current->displayName());
    m_runPage->clear();
    Q_EMIT pageRequested(m_runPage);
    Q_EMIT runDescribed(description);
}

void ResultsController::showRunProfiles(const std::shared_ptr<RunRecord> &run, const RunProfiles &shown)
{
    if (run == m_current)
        m_runPage->showProfiles(shown.server, shown.client);
}

void ResultsController::beginAb()
{
    // Nothing of the comparison shown before stays under the new run's headline, not even until its first blocks.
    m_liveAbBlocks = -1;
    m_announceComparison = false;
    m_compare->setLiveSequentialVerdict(
        tr("starting; judged once the first pair of blocks is in"), SequentialDecision::Undecided);
    m_compare->setRuns({});
    Q_EMIT pageRequested(m_compare);
}

void ResultsController::showAbLive(const AbController &ab)
{
    const int blocks = ab.blocksDone();
    if (!ab.isRunning() || blocks == 0 || blocks == m_liveAbBlocks)
        return;
    const bool first = m_liveAbBlocks < 0;
    m_liveAbBlocks = blocks;
    const std::array<RunRecord, 2> live = ab.liveRecords();
    m_compare->setLiveSequentialVerdict(ab.sequentialText().isEmpty()
            ? tr("judged once the first pair of blocks is in (%n block(s) so far)", nullptr, blocks)
            : ab.sequentialText(),
        ab.sequential().decision());
    m_compare->setRuns({ live[0], live[1] });
    if (first)
        Q_EMIT pageRequested(m_compare);
}

void ResultsController::showAbRuns(const std::array<RunRecord, 2> &records, bool measured, const QString &error)
{
    m_liveAbBlocks = -1;
    m_compare->setLiveSequentialVerdict(QString(), SequentialDecision::Undecided);
    m_history->refresh();
    // The verdict goes to the status bar when the Compare runs page has computed it (off this thread).
    m_announceComparison = error.isEmpty() && measured;
    if (measured) {
        m_compare->setRuns({ records[0], records[1] });
        Q_EMIT pageRequested(m_compare);
    }
}

void ResultsController::announceVerdict()
{
    if (!std::exchange(m_announceComparison, false))
        return;
    Q_EMIT statusMessage(tr("A/B finished: %1").arg(m_compare->comparison().verdictLine()), 30000);
}

void ResultsController::loadRuns(
    const QList<qint64> &ids, LatestJob *jobs, std::function<void(QList<RunRecord> runs)> show)
{
    m_recorder->flush(std::chrono::seconds(5)); // a run that just ended is read with its end, not before it
    // A long run's samples and time series take a while to read: on a pool thread, with a connection of its own.
    jobs->run([path = m_recorder->store()->path(), ids] { return readRuns(path, ids); },
        [this, show = std::move(show)](const ReadRuns &runs) {
            if (!runs.error.isEmpty())
                Q_EMIT statusMessage(runs.error, 10000);
            else
                show(runs.runs);
        });
}

bool ResultsController::openRun(qint64 id)
{
    if (!m_recorder->store())
        return false;
    if (m_live->isRunning()) {
        Q_EMIT statusMessage(tr("A run is going: stop it before opening another"), 10000);
        return false;
    }
    loadRuns({ id }, &m_openJobs, [this](QList<RunRecord> runs) { showOpenedRun(std::move(runs.first())); });
    return true;
}

void ResultsController::showOpenedRun(RunRecord run)
{
    if (m_live->isRunning()) { // started while the run was read: the Run page is the live run's
        Q_EMIT statusMessage(tr("A run is going: stop it before opening another"), 10000);
        return;
    }
    m_current = std::make_shared<RunRecord>(std::move(run));
    m_runPage->clear();
    m_runPage->setRunName(m_current->displayName());
    Q_EMIT pageRequested(m_runPage);
    m_runPage->showSnapshot(m_current->snapshot);
    m_runPage->showWorkers(m_current->split);
    m_runPage->showProfiles(m_current->serverProfile, m_current->clientProfile);
    Q_EMIT runDescribed(
        tr("Run #%1 from the history: %2 → %3 (%4/%5), %6")
            .arg(m_current->id)
            .arg(m_current->method, m_current->target, m_current->transport, m_current->codec, m_current->status));
}

bool ResultsController::compareRuns(const QList<qint64> &ids)
{
    if (!m_recorder->store())
        return false;
    loadRuns(ids, &m_compareJobs, [this](const QList<RunRecord> &runs) {
        m_compare->setRuns(runs);
        Q_EMIT pageRequested(m_compare);
    });
    return true;
}

bool ResultsController::exportTo(const QString &path, const QString &format, bool comparison, QString *error)
{
    QList<const RunRecord *> runs;
    if (comparison) {
        for (const RunRecord &r : m_compare->runs())
            runs << &r;
        if (runs.size() < 2) {
            *error = tr(
                "No comparison to export: compare two or more runs first (History > Compare, or Run > Compare A/B).");
            return false;
        }
    } else {
        if (!m_current || (m_current->snapshot.callsCompleted() == 0 && m_live->isRunning())) {
            *error = tr("No run to export: run the scenario or open a run from the History.");
            return false;
        }
        if (m_current->snapshot.callsCompleted() == 0 && m_current->snapshot.latency.isEmpty())
            m_current->snapshot = m_live->lastSnapshot();
        runs << m_current.get();
    }
    // The chart on screen is the one written; the histogram when the tab shown is not a chart (a split run's Workers).
    const int shown = m_runPage->chartTabs()->currentIndex();
    const auto runChart
        = shown >= 0 && shown < RunPage::ChartCount ? static_cast<RunPage::Chart>(shown) : RunPage::HistogramChart;
    const ChartKind kind
        = comparison ? static_cast<ChartKind>(m_compare->currentChart()) : RunPage::chartKind(runChart);
    if (format == u"html") {
        const QByteArray html
            = comparison ? htmlComparisonReport(runs, m_compare->comparison()) : htmlReport(*runs.first());
        return writeOutputFile(path, html, error);
    }
    if (format.startsWith(QStringLiteral("slide-"))) {
        // The slide the presentation view shows first: the page's candidate against its baseline.
        int current = 0;
        const QList<SlideSpec> specs
            = comparison ? PresentationView::slidesOf(m_compare, &current) : QList<SlideSpec>();
        if (specs.isEmpty()) {
            *error = tr("A slide shows a comparison: compare two runs first, then export the comparison.");
            return false;
        }
        const Slide slide(specs.value(current, specs.first()));
        return format == u"slide-pdf"
            ? slide.save(path, SlideFormat::Pdf, 1.0, error)
            : slide.save(path, SlideFormat::Png, format == u"slide-png-2x" ? 2.0 : 1.0, error);
    }
    if (format == u"png" || format == u"pdf" || format == u"svg") {
        const ChartFormat chart = format == u"png" ? ChartFormat::Png
            : format == u"pdf"                     ? ChartFormat::Pdf
                                                   : ChartFormat::Svg;
        ChartOptions options;
        options.scale = chart == ChartFormat::Png ? 2.0 : 1.0;
        return renderChart(runs, kind, chart, options, path, error);
    }
    const std::optional<ExportFormat> parsed = parseExportFormat(format);
    if (!parsed || !isTextFormat(*parsed)) {
        *error = tr("\"%1\" is not an export format").arg(format);
        return false;
    }
    QList<RunRecord> copies;
    for (const RunRecord *r : runs)
        copies << *r;
    const QByteArray data = comparison ? exportRuns(copies, *parsed, error) : exportRun(copies.first(), *parsed, error);
    if (data.isEmpty() && !error->isEmpty())
        return false;
    return writeOutputFile(path, data, error);
}

void ResultsController::exportWithDialog(bool comparison)
{
    const auto &filters = exportFilters(comparison);
    QStringList names;
    for (const auto &[filter, format] : filters)
        names << filter;
    QString selected = names.first();
    const QString base = comparison
        ? QStringLiteral("comparison")
        : (m_current ? m_current->displayName() : QStringLiteral("run"))
              .replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    QString path = QFileDialog::getSaveFileName(m_dialogParent, comparison ? tr("Export comparison") : tr("Export run"),
        QDir::home().filePath(base), names.join(QStringLiteral(";;")), &selected);
    if (path.isEmpty())
        return;
    QString format = filters.value(static_cast<int>(names.indexOf(selected))).second;
    if (QFileInfo(path).suffix().isEmpty()) {
        const QString suffix = selected.section(QStringLiteral("*."), 1).section(u')', 0, 0);
        path += u'.' + suffix;
    }
    QString error;
    if (exportTo(path, format, comparison, &error))
        Q_EMIT statusMessage(tr("Wrote %1").arg(path), 15000);
    else
        QMessageBox::warning(m_dialogParent, tr("Export"), error);
}

bool ResultsController::importReports(const QStringList &files)
{
    if (!m_recorder->store() || m_importing)
        return false;
    m_importing = true;
    // Reading and parsing reports (a ghz report may hold every call) and inserting them: off the GUI thread.
    runInBackground(
        this, [path = m_recorder->store()->path(), files] { return importReportFiles(path, files); },
        [this](const ImportedReports &done) {
            m_importing = false;
            m_lastMerged = done.merged;
            m_history->refresh();
            Q_EMIT reportsImported(done.imported, done.problems.join(u'\n'));
        });
    return true;
}

void ResultsController::importWithDialog()
{
    if (m_importing) {
        Q_EMIT statusMessage(tr("An import is going: wait for it to end"), 10000);
        return;
    }
    const QStringList files = QFileDialog::getOpenFileNames(
        m_dialogParent, tr("Import ghz or rpcscope reports"), QString(), tr("JSON reports (*.json);;All files (*)"));
    if (files.isEmpty())
        return;
    if (!importReports(files)) {
        QMessageBox::warning(m_dialogParent, tr("Import"), tr("The run history is unavailable."));
        return;
    }
    m_importFromDialog = true;
    Q_EMIT statusMessage(tr("Importing %n report(s)…", nullptr, static_cast<int>(files.size())), 0);
}

void ResultsController::importFolderWithDialog()
{
    if (m_importing) {
        Q_EMIT statusMessage(tr("An import is going: wait for it to end"), 10000);
        return;
    }
    const QString folder = QFileDialog::getExistingDirectory(m_dialogParent, tr("Import a folder of reports"));
    if (folder.isEmpty())
        return;
    if (!importReports({ folder })) {
        QMessageBox::warning(m_dialogParent, tr("Import"), tr("The run history is unavailable."));
        return;
    }
    m_importFromDialog = true;
    Q_EMIT statusMessage(tr("Importing the reports in %1…").arg(folder), 0);
}

void ResultsController::showImportOutcome(int imported, const QString &error)
{
    if (!std::exchange(m_importFromDialog, false))
        return;
    Q_EMIT statusMessage(tr("Imported %n run(s) into the history", nullptr, imported), 15000);
    if (m_lastMerged.size() == 1) // a split run's segments: its merged run, with the workers side by side
        openRun(m_lastMerged.front());
    else
        Q_EMIT pageRequested(m_history);
    if (!error.isEmpty())
        QMessageBox::warning(m_dialogParent, tr("Import"), error);
}

std::vector<RunListEntry> ResultsController::baselineCandidates() const
{
    if (!m_recorder->store() || !m_current || m_current->method.isEmpty())
        return {};
    RunFilter filter;
    filter.method = m_current->method;
    filter.limit = 51;
    QString error;
    std::vector<RunListEntry> runs = m_recorder->store()->list(filter, &error);
    // The filter matches by substring; a baseline is a run of this very method.
    std::erase_if(
        runs, [this](const RunListEntry &e) { return e.id == m_current->id || e.method != m_current->method; });
    if (runs.size() > 50)
        runs.resize(50);
    return runs;
}

bool ResultsController::compareCurrentWith(qint64 baselineId)
{
    if (!m_current || m_current->id <= 0 || m_live->isRunning()) {
        Q_EMIT statusMessage(tr("Nothing to compare: finish a run, or open one from the History."), 10000);
        return false;
    }
    return compareRuns({ baselineId, m_current->id });
}

void ResultsController::compareWithDialog()
{
    const std::vector<RunListEntry> runs = baselineCandidates();
    if (!m_current || m_current->id <= 0 || runs.empty()) {
        QMessageBox::information(m_dialogParent, tr("Compare with a previous run"),
            !m_current || m_current->id <= 0
                ? tr("Run the scenario first (or open a run from the History): it is compared with an "
                     "earlier run of the same method.")
                : tr("The history has no other run of %1 to compare with.").arg(m_current->method));
        return;
    }
    QStringList items;
    for (const RunListEntry &e : runs) {
        items << tr("#%1  %2  %3  p50 %4  %5")
                     .arg(e.id)
                     .arg(e.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")),
                         e.name.isEmpty() ? e.target : e.name, formatNanos(static_cast<double>(e.p50Ns)),
                         e.labels.join(QStringLiteral(", ")));
    }
    bool ok = false;
    const QString picked = QInputDialog::getItem(m_dialogParent, tr("Compare with a previous run"),
        tr("Baseline for run #%1 (%2):").arg(m_current->id).arg(m_current->method), items, 0, false, &ok);
    if (ok)
        compareCurrentWith(runs[static_cast<size_t>(items.indexOf(picked))].id);
}

} // namespace rpcscope
