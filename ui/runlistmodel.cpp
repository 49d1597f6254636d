#include "runlistmodel.h"

#include <algorithm>

#include "store/runrecord.h"
#include "util/units.h"

#include <QApplication>
#include <QFont>
#include <QIcon>
#include <QLocale>
#include <QPalette>
#include <QStyle>

namespace rpcscope {

namespace {

bool isNumeric(int column)
{
    switch (column) {
    case RunListModel::IdColumn:
    case RunListModel::CallsColumn:
    case RunListModel::RpsColumn:
    case RunListModel::P50Column:
    case RunListModel::P99Column:
    case RunListModel::ErrorsColumn:
        return true;
    default:
        return false;
    }
}

bool is(const QString &status, const char16_t *name)
{
    return status == QStringView(name);
}

QString statusText(const QString &status)
{
    if (status.isEmpty())
        return status;
    return status.at(0).toUpper() + status.mid(1);
}

QString statusExplanation(const QString &status)
{
    if (is(status, RunStatus::Running))
        return RunListModel::tr("Being written now by a process that is still alive.");
    if (is(status, RunStatus::Finished))
        return RunListModel::tr("Every planned call was made, or the duration ran out.");
    if (is(status, RunStatus::Stopped))
        return RunListModel::tr("Stopped by the user; what was measured until then is kept.");
    if (is(status, RunStatus::Interrupted))
        return RunListModel::tr("Its process died mid-run: the figures go up to its last stored interval only.");
    if (is(status, RunStatus::Imported))
        return RunListModel::tr("Imported from a report file.");
    return {};
}

QString localTime(const QDateTime &time, bool seconds)
{
    const QString format = seconds ? QStringLiteral("yyyy-MM-dd HH:mm:ss") : QStringLiteral("yyyy-MM-dd HH:mm");
    return time.isValid() ? time.toLocalTime().toString(format) : QString();
}

QString rpsText(double rps)
{
    return QLocale().toString(rps, 'f', rps >= 100 ? 0 : 1);
}

} // namespace

RunListModel::RunListModel(QObject *parent) : QAbstractTableModel(parent) { }

void RunListModel::setRuns(std::vector<RunListEntry> runs)
{
    beginResetModel();
    m_runs = std::move(runs);
    endResetModel();
}

int RunListModel::rowOf(qint64 id) const
{
    for (size_t i = 0; i < m_runs.size(); ++i) {
        if (m_runs[i].id == id)
            return static_cast<int>(i);
    }
    return -1;
}

QStringList RunListModel::parseLabels(const QString &text)
{
    QStringList labels;
    const QStringList parts = text.split(u',');
    for (const QString &part : parts) {
        const QString label = part.trimmed();
        if (!label.isEmpty())
            labels << label;
    }
    labels.removeDuplicates();
    labels.sort();
    return labels;
}

QString RunListModel::shortMethod(const QString &method)
{
    const qsizetype slash = method.lastIndexOf(u'/');
    if (slash < 0)
        return method.mid(method.lastIndexOf(u'.') + 1);
    const QString service = method.left(slash);
    return service.mid(service.lastIndexOf(u'.') + 1) + method.mid(slash);
}

int RunListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_runs.size());
}

int RunListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunListModel::displayData(const RunListEntry &run, int column) const
{
    const QLocale locale;
    const bool measured = run.hasOkCalls();
    switch (column) {
    case IdColumn:
        return QString::number(run.id);
    case StartedColumn:
        return localTime(run.startedAt, false); // the seconds are in the tooltip
    case StatusColumn:
        return statusText(run.status);
    case NameColumn:
        return run.name.isEmpty() ? tr("(unnamed)") : run.name;
    case LabelsColumn:
        return run.labels.join(QStringLiteral(", "));
    case MethodColumn:
        return shortMethod(run.method);
    case StackColumn:
        return run.codec.isEmpty() ? run.transport : run.transport + u'/' + run.codec;
    case TargetColumn:
        return run.target;
    case CallsColumn:
        return locale.toString(static_cast<qulonglong>(run.calls));
    case RpsColumn:
        return measured ? rpsText(run.rps) : QString();
    case P50Column:
        return measured ? formatNanos(static_cast<double>(run.p50Ns)) : QString();
    case P99Column:
        return measured ? formatNanos(static_cast<double>(run.p99Ns)) : QString();
    case ErrorsColumn:
        return locale.toString(static_cast<qulonglong>(run.failed));
    default:
        return {};
    }
}

QVariant RunListModel::sortData(const RunListEntry &run, int column) const
{
    switch (column) {
    case IdColumn:
        return run.id;
    case StartedColumn:
        // Ties (imports stamped alike) keep the store's newest-first order: the proxy sorts stably.
        return run.startedAt.isValid() ? run.startedAt.toMSecsSinceEpoch() : qint64(0);
    case NameColumn:
        return run.name.toLower();
    case LabelsColumn:
        return run.labels.join(u',').toLower();
    case MethodColumn:
        return shortMethod(run.method).toLower();
    case CallsColumn:
        return static_cast<qulonglong>(run.calls);
    case RpsColumn:
        return run.rps;
    case P50Column:
        return static_cast<qulonglong>(run.p50Ns);
    case P99Column:
        return static_cast<qulonglong>(run.p99Ns);
    case ErrorsColumn:
        return static_cast<qulonglong>(run.failed);
    default:
        return displayData(run, column).toString().toLower();
    }
}

QVariant RunListModel::toolTipData(const RunListEntry &run, int column) const
{
    switch (column) {
    case StartedColumn: {
        QString tip = localTime(run.startedAt, true);
        if (run.endedAt.isValid()) {
            const double seconds = static_cast<double>(run.startedAt.msecsTo(run.endedAt)) / 1000.0;
            tip += u'\n' + tr("Ended %1 (%2 s later)").arg(localTime(run.endedAt, true)).arg(seconds, 0, 'f', 1);
        }
        return tip;
    }
    case StatusColumn:
        return statusExplanation(run.status);
    case NameColumn:
        return run.name.isEmpty() ? tr("No name yet: F2 names it.") : run.name;
    case LabelsColumn:
        return run.labels.isEmpty() ? tr("No labels: Ctrl+L adds some (comma-separated).") : run.labels.join(u'\n');
    case MethodColumn:
        return run.method;
    case StackColumn:
        return tr("Transport %1, codec %2").arg(run.transport, run.codec);
    case TargetColumn:
        return run.origin.isEmpty() || run.origin == u"rpcscope" ? run.target
                                                                 : run.target + u'\n' + tr("From %1").arg(run.origin);
    case ErrorsColumn:
        if (run.calls > 0 && run.failed > 0) {
            return tr("%1 of %2 calls failed (%3%)")
                .arg(run.failed)
                .arg(run.calls)
                .arg(100.0 * static_cast<double>(run.failed) / static_cast<double>(run.calls), 0, 'f', 2);
        }
        return {};
    case P50Column:
    case P99Column:
        return run.hasOkCalls() ? tr("OK calls only; mean %1").arg(formatNanos(run.meanNs)) : QVariant();
    default:
        return {};
    }
}

QVariant RunListModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::ParentIsInvalid))
        return {};
    const RunListEntry &run = entry(index.row());
    const int column = index.column();
    const bool interrupted = is(run.status, RunStatus::Interrupted);
    switch (role) {
    case Qt::DisplayRole:
        return displayData(run, column);
    case Qt::EditRole:
        if (column == NameColumn)
            return run.name;
        if (column == LabelsColumn)
            return run.labels.join(QStringLiteral(", "));
        return displayData(run, column);
    case SortRole:
        return sortData(run, column);
    case IdRole:
        return run.id;
    case Qt::ToolTipRole:
        return toolTipData(run, column);
    case Qt::TextAlignmentRole:
        return isNumeric(column) ? int(Qt::AlignRight | Qt::AlignVCenter) : int(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::DecorationRole:
        // The style's icons follow the platform theme, so the mark reads in dark mode as well as in light.
        if (column == StatusColumn && qobject_cast<QApplication *>(QCoreApplication::instance())) {
            if (interrupted)
                return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
            if (is(run.status, RunStatus::Running))
                return QApplication::style()->standardIcon(QStyle::SP_MediaPlay);
        }
        return {};
    case Qt::FontRole:
        if ((column == StatusColumn && interrupted) || (column == NameColumn && run.name.isEmpty())) {
            QFont font;
            font.setBold(interrupted && column == StatusColumn);
            font.setItalic(column == NameColumn);
            return font;
        }
        return {};
    case Qt::ForegroundRole:
        if (column == NameColumn && run.name.isEmpty())
            return QGuiApplication::palette().brush(QPalette::PlaceholderText);
        return {};
    default:
        return {};
    }
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case IdColumn:
            return tr("ID");
        case StartedColumn:
            return tr("Started");
        case StatusColumn:
            return tr("Status");
        case NameColumn:
            return tr("Name");
        case LabelsColumn:
            return tr("Labels");
        case MethodColumn:
            return tr("Method");
        case StackColumn:
            return tr("Stack");
        case TargetColumn:
            return tr("Target");
        case CallsColumn:
            return tr("Calls");
        case RpsColumn:
            return tr("Req/s");
        case P50Column:
            return tr("p50");
        case P99Column:
            return tr("p99");
        case ErrorsColumn:
            return tr("Errors");
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case StartedColumn:
            return tr("When the run started, in local time");
        case StackColumn:
            return tr("Transport / codec");
        case CallsColumn:
            return tr("Calls completed in the timed phase (warm-up excluded)");
        case RpsColumn:
            return tr("Completed calls per second of the timed phase");
        case P50Column:
            return tr("Median latency of OK calls");
        case P99Column:
            return tr("99th percentile latency of OK calls");
        case ErrorsColumn:
            return tr("Calls that ended with any status but OK");
        default:
            return {};
        }
    }
    return {};
}

Qt::ItemFlags RunListModel::flags(const QModelIndex &index) const
{
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::ParentIsInvalid))
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
    if (index.column() == NameColumn || index.column() == LabelsColumn)
        f |= Qt::ItemIsEditable;
    return f;
}

bool RunListModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (role != Qt::EditRole || !index.isValid() || !checkIndex(index, CheckIndexOption::ParentIsInvalid))
        return false;
    RunListEntry &run = m_runs.at(static_cast<size_t>(index.row()));
    if (index.column() == NameColumn) {
        const QString name = value.toString().trimmed();
        if (name == run.name)
            return true;
        if (m_editHandler && !m_editHandler(run.id, NameColumn, name))
            return false;
        run.name = name;
    } else if (index.column() == LabelsColumn) {
        const QStringList labels = value.userType() == QMetaType::QStringList
            ? parseLabels(value.toStringList().join(u','))
            : parseLabels(value.toString());
        if (labels == run.labels)
            return true;
        if (m_editHandler && !m_editHandler(run.id, LabelsColumn, labels))
            return false;
        run.labels = labels;
    } else {
        return false;
    }
    Q_EMIT dataChanged(index, index);
    return true;
}

void RunFilterProxy::setFilters(
    const QString &text, const QString &method, const QString &label, const QDateTime &since)
{
    m_text = text.trimmed();
    m_method = method;
    m_label = label.trimmed();
    m_since = since;
    invalidateFilter();
}

bool RunFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (sourceParent.isValid())
        return false;
    const RunListEntry &run = static_cast<const RunListModel *>(sourceModel())->entry(sourceRow);
    auto has = [](const QString &where, const QString &what) { return where.contains(what, Qt::CaseInsensitive); };
    auto anyLabelHas = [&](const QString &what) {
        return std::any_of(run.labels.cbegin(), run.labels.cend(), [&](const QString &l) { return has(l, what); });
    };
    if (!m_text.isEmpty() && !has(run.name, m_text) && !has(run.method, m_text) && !has(run.target, m_text)
        && !has(run.transport, m_text) && !has(run.codec, m_text) && !anyLabelHas(m_text))
        return false;
    if (!m_method.isEmpty() && run.method != m_method)
        return false;
    if (!m_label.isEmpty() && !anyLabelHas(m_label))
        return false;
    return !m_since.isValid() || (run.startedAt.isValid() && run.startedAt >= m_since);
}

} // namespace rpcscope
