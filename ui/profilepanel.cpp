#include "profilepanel.h"

#include "export/flamegraphsvg.h"
#include "flamegraphview.h"
#include "profile/profiler.h"
#include "report/profilereport.h"
#include "util/outputfile.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace rpcscope {

namespace {

// CPU us per call with two decimals below 1 ("0.42"): a table of many small functions.
QString us(double value, bool sign = false)
{
    return formatUsPerCall(value, sign, true);
}

// The table lists at most this many functions: more is a haystack, and the graph's search finds the rest.
constexpr int kMaxRows = 200;

QString scopeName(const Profile &profile)
{
    return profile.scope == u"client" ? QObject::tr("Client") : QObject::tr("Server");
}

QTableWidgetItem *numberItem(const QString &text)
{
    auto *item = new QTableWidgetItem(text);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

// "1 process" / "3 processes", "20,000 calls".
QString processesText(const Profile &profile)
{
    const auto count = static_cast<qsizetype>(profile.processes.size());
    return count == 1 ? QObject::tr("1 process") : QObject::tr("%1 processes").arg(count);
}

QString notesHtml(const QStringList &notes)
{
    QString html;
    for (const QString &note : notes)
        html += QStringLiteral("<br><span style=\"color:#b35900\">%1</span>").arg(note.toHtmlEscaped());
    return html;
}

} // namespace

ProfilePanel::ProfilePanel(QWidget *parent)
    : QWidget(parent)
    , m_summary(new QLabel)
    , m_save(new QPushButton(tr("Save SVG...")))
    , m_hotspot(new QPushButton(tr("Open in hotspot")))
    , m_split(new QSplitter(Qt::Vertical))
    , m_graph(new FlameGraphView)
    , m_table(new QTableWidget)
{
    m_summary->setObjectName(QStringLiteral("profileSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setTextFormat(Qt::RichText);
    m_save->setObjectName(QStringLiteral("saveFlameGraph"));
    m_save->setToolTip(tr("Write the flame graph as an SVG file that zooms and searches in a browser."));
    m_hotspot->setObjectName(QStringLiteral("openInHotspot"));
    m_hotspot->hide();
    m_table->setObjectName(QStringLiteral("profileFunctions"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setToolTip(tr("Select a function to find it in the flame graph."));
    m_split->addWidget(m_graph);
    m_split->addWidget(m_table);
    m_split->setStretchFactor(0, 3);
    m_split->setStretchFactor(1, 2);
    m_split->setChildrenCollapsible(false);

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_hotspot, 0, Qt::AlignTop);
    top->addWidget(m_save, 0, Qt::AlignTop);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_split, 1);

    connect(m_table, &QTableWidget::itemSelectionChanged, this, &ProfilePanel::searchSelected);
    connect(m_save, &QPushButton::clicked, this, &ProfilePanel::saveSvg);
    connect(m_hotspot, &QPushButton::clicked, this, &ProfilePanel::openInHotspot);
    clear(tr("No profile."));
}

ProfilePanel::~ProfilePanel() = default;

void ProfilePanel::clear(const QString &message)
{
    m_diff.reset();
    m_graph->clear(message);
    m_table->clear();
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
    m_summary->setText(message.toHtmlEscaped());
    m_save->setEnabled(false);
    offerHotspot(QString());
}

void ProfilePanel::showProfile(const Profile &profile, const QString &title)
{
    m_diff.reset();
    m_title = title;
    const QString scope = scopeName(profile);
    if (profile.isEmpty() || profile.calls() <= 0) {
        const QString hint = noSamplesHint(profile);
        clear(hint.isEmpty() ? tr("%1 profile: no samples.").arg(scope)
                             : tr("%1 profile: no samples: %2.").arg(scope, hint));
        m_summary->setText(m_summary->text() + notesHtml(profile.notes));
        return;
    }
    const FoldedStacks stacks = profile.usPerCall();
    m_graph->setTree(buildFlameTree(stacks, QStringLiteral("all")), false);
    QString text = tr("<b>%1 CPU: %2 µs per call</b> over %L3 calls, %4")
                       .arg(scope, us(profile.totalUsPerCall()))
                       .arg(profile.calls(), 0, 'f', 0)
                       .arg(processesText(profile));
    if (const QString samples = profileSamplesText(profile); !samples.isEmpty())
        text += QStringLiteral(", ") + samples.toHtmlEscaped();
    if (profile.profilerCpuSeconds >= 0)
        text += tr("; the profiler's own CPU %1").arg(profilerCpuText(profile).toHtmlEscaped());
    if (!profile.how.isEmpty())
        text += tr("<br>Recorded with %1").arg(profile.how.toHtmlEscaped());
    m_summary->setText(text + notesHtml(profile.notes));
    fillCosts(profile);
    m_save->setEnabled(true);
    offerHotspot(profile.perfData);
}

void ProfilePanel::fillCosts(const Profile &profile)
{
    const double total = profile.totalUsPerCall();
    const std::vector<FunctionCost> costs = functionCosts(profile.usPerCall());
    m_table->clear();
    m_table->setColumnCount(4);
    m_table->setHorizontalHeaderLabels({ tr("Function"), tr("Self µs/call"), tr("Total µs/call"), tr("Self share") });
    const int rows = static_cast<int>(std::min<size_t>(costs.size(), kMaxRows));
    m_table->setRowCount(rows);
    for (int row = 0; row < rows; ++row) {
        const FunctionCost &cost = costs[static_cast<size_t>(row)];
        auto *name = new QTableWidgetItem(flameDisplayName(cost.name));
        name->setToolTip(flameDisplayName(cost.name));
        name->setData(Qt::UserRole, cost.name);
        m_table->setItem(row, 0, name);
        m_table->setItem(row, 1, numberItem(us(cost.self)));
        m_table->setItem(row, 2, numberItem(us(cost.total)));
        m_table->setItem(row, 3,
            numberItem(total > 0 ? QString::number(100 * cost.self / total, 'f', 1) + u'%' : QStringLiteral("-")));
    }
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int column = 1; column < 4; ++column)
        m_table->horizontalHeader()->setSectionResizeMode(column, QHeaderView::ResizeToContents);
}

void ProfilePanel::showDiff(
    const Profile &a, const Profile &b, const QString &baseName, const QString &newName, const QString &title)
{
    m_title = title;
    m_baseName = baseName;
    m_newName = newName;
    const QString scope = scopeName(b);
    if (a.isEmpty() || b.isEmpty() || a.calls() <= 0 || b.calls() <= 0) {
        clear(tr("%1 profile: %2 has no samples.").arg(scope, a.isEmpty() || a.calls() <= 0 ? baseName : newName));
        m_summary->setText(m_summary->text() + notesHtml(a.notes + b.notes));
        return;
    }
    const ProfileDiff diff = diffProfiles(a, b);
    m_graph->setSideNames(baseName, newName);
    m_graph->setTree(buildDiffFlameTree(a.usPerCall(), b.usPerCall(), diff, QStringLiteral("all")), true);
    const double change = diff.totalB - diff.totalA;
    QString text = tr("<b>%1 CPU: %2 → %3 µs per call</b> (%4, %5% CI %6 .. %7), judged %8")
                       .arg(scope, us(diff.totalA), us(diff.totalB), us(change, true))
                       .arg(diff.confidence * 100, 0, 'f', 0)
                       .arg(us(diff.totalDiff.low, true), us(diff.totalDiff.high, true), diff.method.toHtmlEscaped());
    const std::vector<FunctionChange> top = diff.ownChanges(3);
    if (top.empty()) {
        text += tr("<br>No function changed beyond noise (changes under %1 µs per call are not flagged).")
                    .arg(us(diff.minChangeUs));
    }
    for (const FunctionChange &c : top) {
        text += QStringLiteral("<br>• ")
            + profileChangeSentence(c, diff.confidence, newName)
                  .replace(QStringLiteral(" us per call"), QStringLiteral(" µs per call"))
                  .toHtmlEscaped();
    }
    QStringList notes;
    for (const QString &note : a.notes)
        notes << QStringLiteral("%1: %2").arg(baseName, note);
    for (const QString &note : b.notes)
        notes << QStringLiteral("%1: %2").arg(newName, note);
    m_summary->setText(text + notesHtml(notes));
    fillChanges(diff);
    m_diff = diff;
    m_save->setEnabled(true);
    offerHotspot(b.perfData);
    if (!b.perfData.isEmpty())
        m_hotspot->setText(tr("Open %1 in hotspot").arg(newName));
}

void ProfilePanel::fillChanges(const ProfileDiff &diff)
{
    m_table->clear();
    m_table->setColumnCount(7);
    m_table->setHorizontalHeaderLabels({ tr("Function"), m_baseName, m_newName,
        tr("%1 − %2").arg(m_newName, m_baseName), tr("%1% interval").arg(diff.confidence * 100, 0, 'f', 0),
        tr("Self %1 − %2").arg(m_newName, m_baseName), tr("Judged") });
    const int rows = static_cast<int>(std::min<size_t>(diff.functions.size(), kMaxRows));
    m_table->setRowCount(rows);
    const QColor slower(0xc0, 0x1c, 0x28);
    const QColor faster(0x1c, 0x59, 0xc0);
    for (int row = 0; row < rows; ++row) {
        const FunctionChange &c = diff.functions[static_cast<size_t>(row)];
        const bool total = changeToldByTotal(c);
        const DiffInterval interval = total ? c.totalDiff : c.selfDiff;
        const double delta = total ? c.totalChange() : c.selfChange();
        auto *name = new QTableWidgetItem(flameDisplayName(c.name));
        name->setToolTip(flameDisplayName(c.name));
        name->setData(Qt::UserRole, c.name);
        m_table->setItem(row, 0, name);
        m_table->setItem(row, 1, numberItem(us(total ? c.totalA : c.selfA)));
        m_table->setItem(row, 2, numberItem(us(total ? c.totalB : c.selfB)));
        m_table->setItem(row, 3, numberItem(us(delta, true)));
        m_table->setItem(row, 4, numberItem(us(interval.low, true) + QStringLiteral(" .. ") + us(interval.high, true)));
        m_table->setItem(row, 5, numberItem(us(c.selfChange(), true)));
        auto *judgedItem = new QTableWidgetItem(profileChangeVerdict(c, m_newName));
        if (c.changed) {
            judgedItem->setForeground(delta > 0 ? slower : faster);
            QFont bold = judgedItem->font();
            bold.setBold(!c.explainedByCallee);
            judgedItem->setFont(bold);
        }
        m_table->setItem(row, 6, judgedItem);
    }
    m_table->horizontalHeaderItem(1)->setToolTip(
        tr("µs per call in %1: the function with what it calls, or its own code alone when only that changed.")
            .arg(m_baseName));
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int column = 1; column < 7; ++column)
        m_table->horizontalHeader()->setSectionResizeMode(column, QHeaderView::ResizeToContents);
}

void ProfilePanel::searchSelected()
{
    const QList<QTableWidgetItem *> selected = m_table->selectedItems();
    if (selected.isEmpty())
        return;
    const QTableWidgetItem *name = m_table->item(selected.first()->row(), 0);
    if (name)
        m_graph->setSearchText(
            QLatin1Char('^') + QRegularExpression::escape(name->data(Qt::UserRole).toString()) + QLatin1Char('$'));
}

QByteArray ProfilePanel::svg() const
{
    if (!m_save->isEnabled())
        return {};
    FlameGraphSvgOptions options;
    options.differential = m_graph->isDifferential();
    options.baseName = m_baseName;
    options.newName = m_newName;
    if (!m_title.isEmpty())
        options.title = m_title;
    if (m_diff)
        options.subtitle
            = tr("%1 → %2 µs per call; judged %3").arg(us(m_diff->totalA), us(m_diff->totalB), m_diff->method);
    return flameGraphSvg(m_graph->tree(), options).toUtf8();
}

void ProfilePanel::offerHotspot(const QString &perfData)
{
    m_perfData = perfData;
    m_hotspot->setText(tr("Open in hotspot"));
    m_hotspot->setVisible(!perfData.isEmpty());
    if (perfData.isEmpty())
        return;
    const QString hotspot = QStandardPaths::findExecutable(QStringLiteral("hotspot"));
    const bool kept = isKeptPerfData(perfData);
    m_hotspot->setEnabled(kept && !hotspot.isEmpty());
    m_hotspot->setToolTip(!kept
            ? tr("perf's recording %1 is not there any more (or is not one rpcscope kept).").arg(perfData)
            : hotspot.isEmpty()
            ? tr("hotspot is not installed: apt install hotspot")
            : tr("Open perf's recording of this run (%1) in hotspot: its own flame graph, caller and "
                 "callee views, and the timeline.")
                  .arg(perfData));
}

void ProfilePanel::openInHotspot()
{
    const QString hotspot = QStandardPaths::findExecutable(QStringLiteral("hotspot"));
    if (hotspot.isEmpty() || !isKeptPerfData(m_perfData) || !QProcess::startDetached(hotspot, { m_perfData }))
        m_summary->setText(m_summary->text()
            + QStringLiteral("<br><span style=\"color:#c01c28\">%1</span>")
                  .arg(tr("hotspot did not start for %1").arg(m_perfData).toHtmlEscaped()));
}

void ProfilePanel::saveSvg()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save flame graph"), QStringLiteral("flamegraph.svg"), tr("SVG (*.svg);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!writeOutputFile(path, svg(), &error))
        m_summary->setText(m_summary->text()
            + QStringLiteral("<br><span style=\"color:#c01c28\">%1</span>").arg(error.toHtmlEscaped()));
}

} // namespace rpcscope
