#include "matrixpage.h"

#include "layoutmemory.h"
#include "matrixcharts.h"

#include "metrics/callstatus.h"

#include "charts.h"
#include "export/exporter.h"
#include "qcp.h"
#include "util/units.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <google/protobuf/descriptor.h>

#include <cmath>

namespace rpcscope {

namespace {

const QString kStacksKey = QStringLiteral("matrix/stacks");

/// The kinds a stack can be, as its Transport/codec cell offers them.
const QStringList kStackKinds { QStringLiteral("grpc/protobuf"), QStringLiteral("h2grpc/protobuf"),
    QStringLiteral("http/json"), QStringLiteral("http/protobuf"), QStringLiteral("http/msgpack"),
    QStringLiteral("msgpack/msgpack"), QStringLiteral("none/protobuf"), QStringLiteral("none/json"),
    QStringLiteral("none/msgpack") };

} // namespace

MatrixPage::MatrixPage(Preparer preparer, QWidget *parent)
    : QWidget(parent)
    , m_runner(new MatrixController(std::move(preparer), this))
    , m_stackTable(new QTableWidget(0, 4))
    , m_callers(new QLineEdit)
    , m_payloads(new QLineEdit)
    , m_metric(new QComboBox)
    , m_run(new QPushButton(tr("Run matrix")))
    , m_stop(new QPushButton(tr("Stop")))
    , m_progress(new QLabel)
    , m_bars(new QCustomPlot)
    , m_curves(new QCustomPlot)
    , m_table(new QTableWidget)
{
    // Transports and codecs a row each: side by side they held the page 780 px wide, wider than a laptop leaves it.
    auto *chooseTransports = new QHBoxLayout;
    auto *chooseCodecs = new QHBoxLayout;
    addChoiceBoxes(chooseTransports, chooseCodecs);
    setUpControls();
    QPushButton *addStack = nullptr;
    QPushButton *removeStack = nullptr;
    QHBoxLayout *stacksRow = makeStacksRow(&addStack, &removeStack);
    QHBoxLayout *progressRow = nullptr;
    QFormLayout *form = makeForm(chooseTransports, chooseCodecs, stacksRow, &progressRow);

    setUpCharts();
    progressRow->addWidget(makeSaveReportButton());

    setUpTable();
    layOutPage(form);

    connectSignals(addStack, removeStack);
    // The stacks kept from last time.
    QList<MatrixStack> kept;
    for (const QString &spec : QSettings().value(kStacksKey).toStringList()) {
        if (const auto stack = parseMatrixStack(spec, nullptr))
            kept << *stack;
    }
    setStacks(kept);
    redraw();
}

void MatrixPage::addChoiceBoxes(QHBoxLayout *chooseTransports, QHBoxLayout *chooseCodecs)
{
    QHBoxLayout *choose = chooseTransports;
    auto addBoxes = [&](const QString &, const QList<QPair<QString, QString>> &items, QList<QCheckBox *> *into) {
        for (const auto &[name, text] : items) {
            auto *box = new QCheckBox(text);
            box->setObjectName(QStringLiteral("matrix_") + name);
            box->setChecked(true);
            box->setProperty("key", name);
            choose->addWidget(box);
            into->append(box);
        }
        choose->addStretch();
    };
    addBoxes(tr("Transports:"),
        { { QStringLiteral("grpc"), tr("gRPC") }, { QStringLiteral("h2grpc"), QStringLiteral("h2grpc") },
            { QStringLiteral("http"), tr("HTTP") }, { QStringLiteral("msgpack"), tr("msgpack-rpc") },
            { QStringLiteral("none"), tr("no RPC") } },
        &m_transports);
    // rpcscope's own gRPC client is asked for, as rpcscope-cli matrix takes it only in --transports.
    m_transports.at(1)->setChecked(false);
    choose = chooseCodecs;
    addBoxes(tr("Codecs:"),
        { { QStringLiteral("protobuf"), QStringLiteral("protobuf") },
            { QStringLiteral("json"), QStringLiteral("json") },
            { QStringLiteral("msgpack"), QStringLiteral("msgpack") } },
        &m_codecs);
    for (QCheckBox *box : std::as_const(m_transports))
        box->setProperty("tip",
            tr("Run the method over this transport (against its built-in server unless it is the scenario's own "
               "transport and target)."));
    for (QCheckBox *box : std::as_const(m_codecs))
        box->setProperty("tip", tr("Encode with this codec where the transport can carry it."));
}

void MatrixPage::setUpControls()
{
    m_payloads->setObjectName(QStringLiteral("matrixPayloads"));
    m_payloads->setPlaceholderText(tr("e.g. nums=2; nums=1000 (empty: the scenario's request as it is)"));
    m_payloads->setToolTip(tr("Payload variants, separated by ';': size knobs applied on top of the scenario's. "
                              "Several sizes of one field draw latency-vs-size curves."));
    m_metric->setObjectName(QStringLiteral("matrixMetric"));
    m_metric->addItems({ tr("mean"), tr("p50"), tr("p99"), tr("requests/s"), tr("client CPU/call") });
    m_metric->setToolTip(tr("What the bars and curves show."));
    m_run->setObjectName(QStringLiteral("matrixRun"));
    m_run->setToolTip(tr("Run every cell in turn with the scenario's load settings (the no-RPC baseline with one "
                         "caller, so its mean is the codec's time per call)."));
    m_stop->setObjectName(QStringLiteral("matrixStop"));
    m_stop->setEnabled(false);
    m_progress->setObjectName(QStringLiteral("matrixProgress"));
}

QHBoxLayout *MatrixPage::makeStacksRow(QPushButton **add, QPushButton **remove)
{
    // The user's stacks: each row a transport/codec with its own target and method name. None: the boxes above,
    // against the built-in servers.
    m_stackTable->setObjectName(QStringLiteral("matrixStacks"));
    m_stackTable->setHorizontalHeaderLabels({ tr("Stack"), tr("Transport/codec"), tr("Target"), tr("Method / path") });
    m_stackTable->verticalHeader()->hide();
    m_stackTable->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_stackTable->setToolTip(tr("Your stacks, each with its own target: an address, an HTTP URL with its path, "
                                "builtin, or a server command (started for each of its cells on the port {port} "
                                "names, stopped after it; an HTTP one's path in Method / path); Method: a "
                                "msgpack-rpc method's name. With stacks listed, the boxes above are not used. The "
                                "same as rpcscope-cli matrix --stack NAME=TRANSPORT/CODEC@TARGET."));
    m_stackTable->verticalHeader()->setDefaultSectionSize(m_stackTable->fontMetrics().height() + 10);
    m_stackTable->setMaximumHeight(m_stackTable->fontMetrics().height() * 9);
    auto *addStack = new QPushButton(tr("Add stack"));
    addStack->setObjectName(QStringLiteral("matrixAddStack"));
    auto *removeStack = new QPushButton(tr("Remove"));
    removeStack->setObjectName(QStringLiteral("matrixRemoveStack"));
    auto *stackButtons = new QVBoxLayout;
    stackButtons->addWidget(addStack);
    stackButtons->addWidget(removeStack);
    stackButtons->addStretch();
    auto *stacksRow = new QHBoxLayout;
    stacksRow->addWidget(m_stackTable, 1);
    stacksRow->addLayout(stackButtons);
    *add = addStack;
    *remove = removeStack;
    return stacksRow;
}

QFormLayout *MatrixPage::makeForm(
    QHBoxLayout *chooseTransports, QHBoxLayout *chooseCodecs, QHBoxLayout *stacksRow, QHBoxLayout **progress)
{
    m_callers->setObjectName(QStringLiteral("matrixCallers"));
    m_callers->setPlaceholderText(tr("the scenario's, or e.g. 1,8,64"));
    m_callers->setToolTip(tr("Concurrent callers, one level or several separated by commas: every stack runs at "
                             "each (the no-RPC baseline once, with one caller)."));

    auto *form = new QFormLayout;
    form->addRow(tr("Transports:"), chooseTransports);
    form->addRow(tr("Codecs:"), chooseCodecs);
    form->addRow(tr("Stacks:"), stacksRow);
    form->addRow(tr("Payloads:"), m_payloads);
    auto *row = new QHBoxLayout;
    row->addWidget(m_callers, 1);
    row->addWidget(new QLabel(tr("Show:")));
    row->addWidget(m_metric);
    row->addWidget(m_run);
    row->addWidget(m_stop);
    form->addRow(tr("Callers:"), row);
    auto *progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progress, 1);
    form->addRow(progressRow);
    m_payloads->setMinimumWidth(180);
    *progress = progressRow;
    return form;
}

void MatrixPage::setUpCharts()
{
    m_bars->setObjectName(QStringLiteral("matrixBars"));
    m_curves->setObjectName(QStringLiteral("matrixCurves"));
    for (QCustomPlot *plot : { m_bars, m_curves }) {
        plot->setMinimumHeight(300); // the plot itself, not only its legend: the page scrolls rather than squeeze it
        plot->legend->setVisible(true);
        plot->legend->setFont(font());
        // The legend below the chart, in rows of four, so it never covers a bar or a point.
        plot->axisRect()->insetLayout()->take(plot->legend);
        plot->plotLayout()->addElement(1, 0, plot->legend);
        plot->plotLayout()->setRowStretchFactor(1, 0.001);
        plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
        plot->legend->setWrap(4);
        plot->legend->setBorderPen(Qt::NoPen);
        plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        plot->axisRect()->setRangeZoom(Qt::Vertical);
        plot->axisRect()->setRangeDrag(Qt::Vertical);
    }
    m_curves->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_curves->xAxis->setLabel(tr("payload size (bytes or elements, log scale)"));
    m_curves->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_curves->setVisible(false);

    addChartActions(m_bars, MatrixChart::Bars);
    // A bar's numbers on hover: the cell's metric, mean, p50, p99, rate, failures and codec share.
    m_bars->setMouseTracking(true);
    connect(m_bars, &QCustomPlot::mouseMove, this, [this](QMouseEvent *event) {
        const QString tip = barTipAt(event->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(event->globalPosition().toPoint(), tip, m_bars);
    });
    addChartActions(m_curves, MatrixChart::Curves);
}

QPushButton *MatrixPage::makeSaveReportButton()
{
    auto *saveReport = new QPushButton(tr("Save report..."));
    saveReport->setObjectName(QStringLiteral("matrixSaveReport"));
    saveReport->setToolTip(tr("The comparison for stakeholders: one HTML page (bars, curves, every cell) or the "
                              "table as CSV. Each chart also saves from its context menu."));
    connect(saveReport, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save the stack comparison"),
            QDir::home().filePath(QStringLiteral("stacks.html")), tr("HTML page (*.html);;CSV table (*.csv)"));
        if (QString error; !path.isEmpty() && !this->saveReport(path, &error))
            QMessageBox::warning(this, tr("Save report"), error);
    });
    return saveReport;
}

void MatrixPage::setUpTable()
{
    m_table->setObjectName(QStringLiteral("matrixTable"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setColumnCount(11);
    m_table->setHorizontalHeaderLabels({ tr("Payload"), tr("Stack"), tr("Callers"), tr("Mean"), tr("p50"), tr("p99"),
        tr("Req/s"), tr("Bytes/call"), tr("Client CPU/call"), tr("Codec share"), tr("Errors") });
}

void MatrixPage::layOutPage(QFormLayout *form)
{
    auto *charts = new QSplitter(Qt::Vertical);
    charts->addWidget(m_bars);
    charts->addWidget(m_curves);
    charts->addWidget(m_table);
    rememberSplitter(charts, QStringLiteral("matrix/charts"));
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(charts, 1);
}

void MatrixPage::connectSignals(QPushButton *addStack, QPushButton *removeStack)
{
    connect(m_run, &QPushButton::clicked, this, &MatrixPage::start);
    connect(m_stop, &QPushButton::clicked, this, &MatrixPage::stop);
    connect(m_metric, &QComboBox::currentIndexChanged, this, &MatrixPage::redraw);
    connect(m_runner, &MatrixController::progressed, m_progress, &QLabel::setText);
    connect(m_runner, &MatrixController::cellEnded, this, &MatrixPage::redraw);
    connect(m_runner, &MatrixController::cellDone, this, &MatrixPage::cellDone);
    connect(m_runner, &MatrixController::finished, this, [this](const QString &summary) {
        m_run->setEnabled(true);
        m_stop->setEnabled(false);
        m_progress->setText(summary);
        Q_EMIT finished();
    });
    connect(addStack, &QPushButton::clicked, this, [this] {
        MatrixStack stack;
        stack.name = tr("stack%1").arg(m_stackTable->rowCount() + 1);
        stack.target = QStringLiteral("127.0.0.1:50051");
        addStackRow(stack);
        m_stackTable->setCurrentCell(m_stackTable->rowCount() - 1, 2);
        m_stackTable->editItem(m_stackTable->currentItem());
        saveStacks();
    });
    connect(removeStack, &QPushButton::clicked, this, [this] {
        const int row = m_stackTable->currentRow();
        if (row >= 0)
            m_stackTable->removeRow(row);
        saveStacks();
    });
    connect(m_stackTable, &QTableWidget::itemChanged, this, [this] { saveStacks(); });
}

QString MatrixPage::barTipAt(const QPoint &pos) const
{
    for (int i = 0; i < m_bars->plottableCount(); ++i) {
        auto *bars = qobject_cast<QCPBars *>(m_bars->plottable(i));
        QVariant details;
        // A bar under the point answers the plot's selection tolerance (x 0.99), anything else -1.
        if (!bars || bars->selectTest(pos, false, &details) < 0)
            continue;
        const auto hit = details.value<QCPDataSelection>();
        if (hit.isEmpty())
            continue;
        const double key = bars->data()->at(hit.dataRange().begin())->key;
        const QString series
            = bars->property("fullName").isValid() ? bars->property("fullName").toString() : bars->name();
        return matrixBarTip(
            m_runner->cells(), m_runner->results(), series, static_cast<int>(std::lround(key)) - 1, currentMetric());
    }
    return {};
}

MatrixMetric MatrixPage::currentMetric() const
{
    return static_cast<MatrixMetric>(m_metric->currentIndex()); // the combo lists them in the enum's order
}

void MatrixPage::addChartActions(QCustomPlot *plot, MatrixChart chart)
{
    // The widget's own actions make its context menu, as on the run page.
    plot->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto *copy = new QAction(tr("Copy chart"), plot);
    connect(copy, &QAction::triggered, this, [this, chart] {
        QString error;
        const QByteArray png
            = renderMatrixChart(m_runner->results(), chart, currentMetric(), ChartFormat::Png, {}, &error);
        QApplication::clipboard()->setImage(QImage::fromData(png, "PNG"));
    });
    plot->addAction(copy);
    const std::pair<ChartFormat, QString> saves[] = { { ChartFormat::Png, tr("Save chart as PNG...") },
        { ChartFormat::Pdf, tr("Save chart as PDF...") }, { ChartFormat::Svg, tr("Save chart as SVG...") } };
    for (const auto &[format, text] : saves) {
        auto *save = new QAction(text, plot);
        connect(save, &QAction::triggered, this, [this, chart, format = format] {
            const QString suffix = chartFormatSuffix(format);
            const QString path = QFileDialog::getSaveFileName(this, tr("Save chart as %1").arg(suffix.toUpper()),
                QDir::home().filePath(
                    QStringLiteral("stacks-%1.%2")
                        .arg(chart == MatrixChart::Bars ? QStringLiteral("bars") : QStringLiteral("curves"), suffix)),
                tr("%1 files (*.%2)").arg(suffix.toUpper(), suffix));
            if (QString error; !path.isEmpty() && !saveChart(chart, format, path, &error))
                QMessageBox::warning(this, tr("Save chart"), error);
        });
        plot->addAction(save);
    }
}

bool MatrixPage::saveChart(MatrixChart chart, ChartFormat format, const QString &path, QString *error) const
{
    ChartOptions options;
    options.scale = format == ChartFormat::Png ? 2.0 : 1.0; // a slide's chart, sharp on a projector
    const QByteArray data = renderMatrixChart(m_runner->results(), chart, currentMetric(), format, options, error);
    return !data.isEmpty() && writeOutputFile(path, data, error);
}

bool MatrixPage::saveReport(const QString &path, QString *error) const
{
    if (m_runner->results().isEmpty()) {
        *error = tr("Nothing to save yet: run the matrix first.");
        return false;
    }
    const QByteArray data = path.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive)
        ? formatMatrixCsv(m_runner->results()).toUtf8()
        : matrixHtmlReport(m_runner->results(), m_runner->method(), currentMetric());
    return writeOutputFile(path, data, error);
}

void MatrixPage::addStackRow(const MatrixStack &stack)
{
    const QSignalBlocker blocker(m_stackTable); // not saved half-made
    const int row = m_stackTable->rowCount();
    m_stackTable->insertRow(row);
    m_stackTable->setItem(row, 0, new QTableWidgetItem(stack.name));
    auto *kind = new QComboBox;
    kind->addItems(kStackKinds);
    kind->setCurrentText(transportName(stack.transport) + QLatin1Char('/') + codecName(stack.codec));
    connect(kind, &QComboBox::currentIndexChanged, this, [this] { saveStacks(); });
    m_stackTable->setCellWidget(row, 1, kind);
    m_stackTable->setItem(row, 2, new QTableWidgetItem(stack.target));
    m_stackTable->setItem(row, 3, new QTableWidgetItem(stack.httpPath.isEmpty() ? stack.rpcMethod : stack.httpPath));
}

void MatrixPage::setStacks(const QList<MatrixStack> &stacks)
{
    m_stackTable->setRowCount(0);
    for (const MatrixStack &stack : stacks)
        addStackRow(stack);
    m_stackTable->resizeColumnToContents(1);
    saveStacks();
}

QString MatrixPage::rowSpec(int row) const
{
    auto text = [&](int column) {
        const QTableWidgetItem *item = m_stackTable->item(row, column);
        return item ? item->text().trimmed() : QString();
    };
    const auto *kind = qobject_cast<QComboBox *>(m_stackTable->cellWidget(row, 1));
    QString spec = text(0) + QLatin1Char('=') + (kind ? kind->currentText() : QString());
    if (!text(2).isEmpty())
        spec += QLatin1Char('@') + text(2);
    if (!text(3).isEmpty()) // a msgpack-rpc method, or an HTTP path the target does not give
        spec += (kind && kind->currentText().startsWith(QStringLiteral("http/")) ? QStringLiteral(",path=")
                                                                                 : QStringLiteral(",method="))
            + text(3);
    return spec;
}

std::optional<QList<MatrixStack>> MatrixPage::stacks(QString *error) const
{
    QList<MatrixStack> out;
    QStringList names;
    for (int row = 0; row < m_stackTable->rowCount(); ++row) {
        QString why;
        const std::optional<MatrixStack> stack = parseMatrixStack(rowSpec(row), &why);
        if (!stack || names.contains(stack->name)) {
            if (error)
                *error = tr("Stack row %1: %2")
                             .arg(row + 1)
                             .arg(stack ? tr("two stacks are named \"%1\"").arg(stack->name) : why);
            return std::nullopt;
        }
        names << stack->name;
        out << *stack;
    }
    return out;
}

void MatrixPage::saveStacks() const
{
    QStringList specs;
    for (int row = 0; row < m_stackTable->rowCount(); ++row) {
        // Rows that read as a stack are kept; a half-typed one when it does.
        if (const QString spec = rowSpec(row); parseMatrixStack(spec, nullptr))
            specs << spec;
    }
    QSettings().setValue(kStacksKey, specs);
    // With stacks listed, the transport and codec boxes are not used: say so by greying them out.
    for (QCheckBox *box : m_transports + m_codecs) {
        box->setEnabled(m_stackTable->rowCount() == 0);
        box->setToolTip(m_stackTable->rowCount() == 0
                ? box->property("tip").toString()
                : tr("Not used while stacks are listed below (remove them to compare transports x codecs against "
                     "the built-in servers)."));
    }
}

bool MatrixPage::isRunning() const
{
    return m_runner->isRunning();
}

void MatrixPage::start()
{
    if (m_runner->isRunning())
        return;
    QList<TransportKind> transports;
    for (QCheckBox *box : std::as_const(m_transports)) {
        if (box->isChecked())
            transports << *parseTransport(box->property("key").toString());
    }
    QList<Codec> codecs;
    for (QCheckBox *box : std::as_const(m_codecs)) {
        if (box->isChecked())
            codecs << *parseCodec(box->property("key").toString());
    }
    QStringList payloads;
    for (const QString &p : m_payloads->text().split(QLatin1Char(';'), Qt::SkipEmptyParts))
        payloads << p.trimmed();
    QList<int> levels;
    for (const QString &level : m_callers->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = level.trimmed().toInt(&ok);
        if (!ok || n < 1 || n > 100000 || levels.contains(n)) {
            m_progress->setText(tr("Callers: \"%1\" is not a new number from 1 to 100000").arg(level.trimmed()));
            return;
        }
        levels << n;
    }
    QString why;
    const std::optional<QList<MatrixStack>> stacks = this->stacks(&why);
    if (!stacks) {
        m_progress->setText(why);
        return;
    }
    const QList<MatrixCell> cells
        = stacks->isEmpty() ? matrixCells(transports, codecs, payloads, levels) : stackCells(*stacks, payloads, levels);
    if (cells.isEmpty()) {
        m_progress->setText(tr("Nothing to run: no chosen transport carries a chosen codec."));
        return;
    }
    if (!m_runner->start(cells, &why)) {
        m_progress->setText(why);
        return;
    }
    m_run->setEnabled(false);
    m_stop->setEnabled(true);
    redraw();
}

void MatrixPage::stop()
{
    m_runner->stop();
}

void MatrixPage::redraw()
{
    const auto metric = static_cast<MatrixMetric>(m_metric->currentIndex()); // the combo lists them in order
    drawMatrixBars(m_bars, m_runner->cells(), m_runner->results(), metric);
    m_bars->replot(QCustomPlot::rpQueuedReplot);
    // A size sweep: the same field at several sizes. Curves of the metric against size, one per stack.
    const bool sweep = isSizeSweep(m_runner->cells());
    m_curves->setVisible(sweep);
    if (sweep) {
        drawMatrixCurves(m_curves, m_runner->cells(), m_runner->results(), metric);
        m_curves->replot(QCustomPlot::rpQueuedReplot);
    }

    m_table->setRowCount(static_cast<int>(m_runner->results().size()));
    for (qsizetype i = 0; i < m_runner->results().size(); ++i) {
        const MatrixResult &r = m_runner->results().at(i);
        const double calls = std::max<double>(1, static_cast<double>(r.run.callsCompleted()));
        const double share = codecShare(m_runner->results(), i);
        // A cell in which no call ended OK measured no latency, rate, size or CPU: "-", never 0 ns.
        const bool measured = r.run.latency.count() > 0;
        auto known = [measured](const QString &text) { return measured ? text : QStringLiteral("-"); };
        const QStringList cells { r.cell.payload.isEmpty() ? tr("(as given)") : r.cell.payload,
            r.cell.stack.isEmpty() ? r.cell.kind() : tr("%1 (%2)").arg(r.cell.stack, r.cell.kind()),
            r.cell.concurrency > 0 ? QString::number(r.cell.concurrency) : QStringLiteral("-"),
            known(formatNanos(measured ? r.run.latency.mean() : 0.0)),
            known(formatNanos(static_cast<double>(r.run.latency.percentile(50)))),
            known(formatNanos(static_cast<double>(r.run.latency.percentile(99)))),
            known(QString::number(r.run.requestsPerSecond(), 'f', 0)),
            known(formatBytes(static_cast<double>(r.run.bytesSent + r.run.bytesReceived) / calls)),
            known(QString::number(r.run.clientCpuPerCallUs(), 'f', 1) + tr(" us")),
            share < 0 ? QStringLiteral("-") : QString::number(share * 100, 'f', 1) + QLatin1Char('%'),
            QString::number(r.run.callsFailed()) };
        const QString failure = measured ? QString()
            : !r.failure.isEmpty()       ? tr("Failed: %1").arg(r.failure)
            : r.run.errors.isEmpty()
            ? tr("Failed: no call ended OK.")
            : tr("Failed: no call ended OK. %1: %2")
                  .arg(callStatusName(r.run.errors.first().status), r.run.errors.first().message);
        for (int c = 0; c < cells.size(); ++c) {
            auto *item = new QTableWidgetItem(cells.at(c));
            if (c >= 2)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (!measured) {
                item->setForeground(QColor(0xd0, 0x3b, 0x3b));
                item->setToolTip(failure);
            }
            m_table->setItem(static_cast<int>(i), c, item);
        }
    }
    m_table->resizeColumnsToContents();
}

} // namespace rpcscope
