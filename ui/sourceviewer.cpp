#include "sourceviewer.h"
#include "util/inputfile.h"

#include <QFile>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QVBoxLayout>

namespace rpcscope {

SourceViewer::SourceViewer(QWidget *parent) : QDialog(parent), m_header(new QLabel), m_editor(new QPlainTextEdit)
{
    setObjectName(QStringLiteral("sourceViewer"));
    m_header->setObjectName(QStringLiteral("sourceViewerHeader"));
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setWordWrap(true);
    m_editor->setObjectName(QStringLiteral("sourceViewerText"));
    m_editor->setReadOnly(true);
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    // Keeps the cursor visible in a read-only editor, so the error's place shows even without a highlight.
    m_editor->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_header);
    layout->addWidget(m_editor, 1);
    resize(760, 560);
}

bool SourceViewer::showLocation(const QString &path, int line, int column)
{
    m_path = path;
    setWindowTitle(tr("%1 — rpcscope").arg(path));
    QString why;
    const std::optional<QByteArray> text = readInputFile(path, inputlimits::kProto, &why);
    if (!text) {
        m_header->setText(tr("Cannot read %1: %2").arg(path, why));
        m_editor->clear();
        m_editor->setExtraSelections({});
        return false;
    }
    m_editor->setPlainText(QString::fromUtf8(*text));
    m_header->setText(line > 0 ? tr("%1, line %2").arg(path).arg(line) : path);
    const QTextBlock block = m_editor->document()->findBlockByNumber(std::max(line, 1) - 1);
    QTextCursor cursor(block.isValid() ? block : m_editor->document()->firstBlock());
    if (column > 1)
        cursor.movePosition(
            QTextCursor::Right, QTextCursor::MoveAnchor, std::min(column - 1, cursor.block().length() - 1));
    m_editor->setTextCursor(cursor);
    QList<QTextEdit::ExtraSelection> selections;
    if (line > 0 && block.isValid()) {
        QTextEdit::ExtraSelection highlight;
        highlight.format.setBackground(QColor(0xff, 0xe0, 0xe0));
        highlight.format.setProperty(QTextFormat::FullWidthSelection, true);
        highlight.cursor = QTextCursor(block);
        selections << highlight;
    }
    m_editor->setExtraSelections(selections);
    m_editor->centerCursor();
    return true;
}

int SourceViewer::currentLine() const
{
    return m_editor->textCursor().blockNumber() + 1;
}

} // namespace rpcscope
