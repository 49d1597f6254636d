#include "presentationview.h"

#include "comparepage.h"
#include "qcp.h"
#include "util/outputfile.h"

#include <QContextMenuEvent>
#include <QDir>
#include <QFileDialog>
#include <QKeyEvent>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>

#include <algorithm>

namespace rpcscope {

namespace {

// Save dialog filters, in the order saveWithDialog()'s filter argument counts them.
struct SaveChoice {
    SlideFormat format;
    double scale;
    const char *suffix;
};
constexpr SaveChoice kSaveChoices[]
    = { { SlideFormat::Png, 1.0, "png" }, { SlideFormat::Png, 2.0, "png" }, { SlideFormat::Pdf, 1.0, "pdf" } };

QStringList saveFilters()
{
    return { QObject::tr("PNG image, 1920x1080 (*.png)"), QObject::tr("PNG image at 2x, 3840x2160 (*.png)"),
        QObject::tr("PDF, 16:9, every page of the comparison (*.pdf)") };
}

} // namespace

PresentationView::PresentationView(QList<SlideSpec> specs, int current, QWidget *parent)
    : QWidget(parent), m_specs(std::move(specs))
{
    setObjectName(QStringLiteral("presentationView"));
    setWindowTitle(tr("rpcscope presentation"));
    setFocusPolicy(Qt::StrongFocus);
    setAutoFillBackground(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(480, 270);
    setCurrentIndex(std::clamp(current, 0, std::max(0, count() - 1)));
}

PresentationView::~PresentationView() = default;

QList<SlideSpec> PresentationView::slidesOf(ComparePage *page, int *current)
{
    QList<SlideSpec> specs;
    const QList<RunRecord> &runs = page->runs();
    const RunRecord *baseline = page->baseline();
    const RunRecord *candidate = page->candidate();
    if (runs.size() < 2 || !baseline)
        return specs;
    const auto baselineIndex = static_cast<int>(baseline - runs.constData());
    CompareOptions options;
    options.threshold = page->threshold();
    int shown = 0;
    for (int i = 0; i < runs.size(); ++i) {
        if (i == baselineIndex)
            continue;
        const RunRecord &run = runs[i];
        // The pair on the page is compared already (as the page judges it); the others as it would.
        const Comparison comparison
            = &run == candidate ? page->comparison() : compareRuns(baseline->snapshot, run.snapshot, options);
        SlideSpec spec = makeSlideSpec(*baseline, run, comparison);
        spec.colorA = ComparePage::runColor(baselineIndex);
        spec.colorB = ComparePage::runColor(i);
        if (&run == candidate) {
            shown = static_cast<int>(specs.size());
            // An A/B judged pair by pair leads with that verdict, as the page does.
            QString sequential = page->sequentialText();
            for (const QString &prefix : { ComparePage::tr("Live A/B: "), ComparePage::tr("Judged until decided: ") }) {
                if (sequential.startsWith(prefix))
                    sequential = sequential.mid(prefix.size());
            }
            leadWithSequentialVerdict(&spec, sequential);
        }
        specs << std::move(spec);
    }
    if (current)
        *current = shown;
    return specs;
}

PresentationView *PresentationView::present(ComparePage *page)
{
    int current = 0;
    QList<SlideSpec> specs = slidesOf(page, &current);
    if (specs.isEmpty()) {
        auto *box = new QMessageBox(QMessageBox::Information, tr("Present"),
            tr("Nothing to present yet: select two or more runs in the History and choose Compare, or run Compare "
               "A/B."),
            QMessageBox::Ok, page->window());
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return nullptr;
    }
    auto *view = new PresentationView(std::move(specs), current, page->window());
    view->setWindowFlag(Qt::Window);
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->showFullScreen();
    view->activateWindow();
    view->setFocus();
    return view;
}

void PresentationView::setCurrentIndex(int index, bool lastPage)
{
    if (index < 0 || index >= count() || index == m_current)
        return;
    m_current = index;
    m_slide = std::make_unique<Slide>(m_specs[index]);
    m_page = lastPage ? m_slide->pageCount() - 1 : 0;
    update();
    Q_EMIT currentChanged(index);
}

void PresentationView::next()
{
    if (m_slide && m_page + 1 < m_slide->pageCount()) {
        ++m_page;
        update();
        return;
    }
    setCurrentIndex(m_current + 1);
}

void PresentationView::previous()
{
    if (m_page > 0) {
        --m_page;
        update();
        return;
    }
    setCurrentIndex(m_current - 1, true);
}

bool PresentationView::saveSlide(const QString &path, SlideFormat format, double scale, QString *error) const
{
    if (!m_slide) {
        if (error)
            *error = tr("No slide to save");
        return false;
    }
    if (format == SlideFormat::Pdf)
        return m_slide->save(path, format, scale, error);
    const QByteArray png = m_slide->toPng(scale, error, m_page);
    return !png.isEmpty() && writeOutputFile(path, png, error);
}

void PresentationView::saveWithDialog(int filter)
{
    if (!m_slide)
        return;
    const QStringList filters = saveFilters();
    QString selected = filters.value(std::clamp(filter, 0, static_cast<int>(filters.size()) - 1));
    // Run names are free text: only what is safe in a file name on every system goes into the suggestion.
    static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9._-]+"));
    const SlideSpec &spec = m_slide->spec();
    QString base = QStringLiteral("slide-%1-vs-%2")
                       .arg(QString(spec.baseline.displayName()).replace(unsafe, QStringLiteral("-")),
                           QString(spec.candidate.displayName()).replace(unsafe, QStringLiteral("-")));
    if (m_page > 0 && kSaveChoices[filters.indexOf(selected)].format == SlideFormat::Png)
        base += QStringLiteral("-profile");
    const SaveChoice &suggested = kSaveChoices[filters.indexOf(selected)];
    QString path = QFileDialog::getSaveFileName(this, tr("Save slide"),
        QDir::home().filePath(base + u'.' + QLatin1String(suggested.suffix)), filters.join(QStringLiteral(";;")),
        &selected);
    if (path.isEmpty())
        return;
    const SaveChoice &choice = kSaveChoices[std::max<qsizetype>(0, filters.indexOf(selected))];
    const QString suffix = QStringLiteral(".") + QLatin1String(choice.suffix);
    if (!path.endsWith(suffix, Qt::CaseInsensitive))
        path += suffix;
    QString error;
    if (!saveSlide(path, choice.format, choice.scale, &error))
        QMessageBox::warning(this, tr("Save slide"), error);
}

void PresentationView::paintEvent(QPaintEvent *)
{
    QCPPainter painter(this);
    painter.fillRect(rect(), Qt::white);
    if (!m_slide)
        return;
    // The whole slide, as large as the screen holds it, centred: a 16:10 or 4:3 screen gets white bands.
    const double scale = std::min(width() / double(Slide::kWidth), height() / double(Slide::kHeight));
    painter.translate((width() - Slide::kWidth * scale) / 2, (height() - Slide::kHeight * scale) / 2);
    painter.scale(scale, scale);
    m_slide->paint(&painter, m_page);
    // Where the presenter is, small in the corner: on screen only, never in a saved slide.
    QStringList where;
    if (count() > 1)
        where << QStringLiteral("%1 / %2").arg(m_current + 1).arg(count());
    if (m_slide->pageCount() > 1)
        where << tr("page %1 of %2").arg(m_page + 1).arg(m_slide->pageCount());
    if (!where.isEmpty()) {
        painter.setPen(QColor(0x9a, 0xa0, 0xa6));
        painter.setFont(chartFileFont(22));
        painter.drawText(QRectF(0, 0, Slide::kWidth - 24, Slide::kHeight - 12), Qt::AlignRight | Qt::AlignBottom,
            where.join(QStringLiteral(", ")));
    }
}

bool PresentationView::event(QEvent *event)
{
    // The keys of the presentation are its own while it has the focus: an application shortcut on one of them (the
    // main window's Esc stops a run) must not take it.
    if (event->type() == QEvent::ShortcutOverride) {
        switch (static_cast<QKeyEvent *>(event)->key()) {
        case Qt::Key_Escape:
        case Qt::Key_F11:
        case Qt::Key_Left:
        case Qt::Key_Right:
        case Qt::Key_Up:
        case Qt::Key_Down:
        case Qt::Key_PageUp:
        case Qt::Key_PageDown:
        case Qt::Key_Space:
        case Qt::Key_Backspace:
        case Qt::Key_Home:
        case Qt::Key_End:
            event->accept();
            return true;
        default:
            break;
        }
    }
    return QWidget::event(event);
}

void PresentationView::keyPressEvent(QKeyEvent *event)
{
    if (event->matches(QKeySequence::Save)) {
        saveWithDialog();
        return;
    }
    switch (event->key()) {
    case Qt::Key_Escape:
    case Qt::Key_F11:
        close();
        return;
    // Arrows, and the Page Up/Down a presenter's clicker sends.
    case Qt::Key_Right:
    case Qt::Key_Down:
    case Qt::Key_PageDown:
    case Qt::Key_Space:
        next();
        return;
    case Qt::Key_Left:
    case Qt::Key_Up:
    case Qt::Key_PageUp:
    case Qt::Key_Backspace:
        previous();
        return;
    case Qt::Key_Home:
        setCurrentIndex(0);
        return;
    case Qt::Key_End:
        setCurrentIndex(count() - 1);
        return;
    default:
        QWidget::keyPressEvent(event);
    }
}

void PresentationView::contextMenuEvent(QContextMenuEvent *event)
{
    QMenu menu(this);
    menu.addAction(tr("Save page as PNG…"), this, [this] { saveWithDialog(0); });
    menu.addAction(tr("Save page as PNG at 2x…"), this, [this] { saveWithDialog(1); });
    menu.addAction(tr("Save slide as PDF…"), this, [this] { saveWithDialog(2); });
    menu.addSeparator();
    if (m_slide && m_slide->pageCount() > 1) {
        menu.addAction(tr("Previous page"), this, &PresentationView::previous)->setEnabled(m_page > 0 || m_current > 0);
        menu.addAction(tr("Next page"), this, &PresentationView::next)
            ->setEnabled(m_page + 1 < m_slide->pageCount() || m_current + 1 < count());
    }
    menu.addAction(tr("Previous comparison"), this, [this] { setCurrentIndex(m_current - 1); })
        ->setEnabled(m_current > 0);
    menu.addAction(tr("Next comparison"), this, [this] { setCurrentIndex(m_current + 1); })
        ->setEnabled(m_current + 1 < count());
    menu.addSeparator();
    menu.addAction(tr("Leave the presentation (Esc)"), this, &QWidget::close);
    menu.exec(event->globalPos());
}

} // namespace rpcscope
