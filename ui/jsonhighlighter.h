#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace rpcscope {

/// Colours JSON in the request editor: keys, strings, numbers, literals, and ghz-style {{...}} placeholders.
class JsonHighlighter : public QSyntaxHighlighter {
public:
    explicit JsonHighlighter(QTextDocument *document);

protected:
    void highlightBlock(const QString &text) override;

private:
    QTextCharFormat m_key;
    QTextCharFormat m_string;
    QTextCharFormat m_number;
    QTextCharFormat m_literal;
    QTextCharFormat m_placeholder;
    QRegularExpression m_stringPattern;
    QRegularExpression m_numberPattern;
    QRegularExpression m_literalPattern;
    QRegularExpression m_placeholderPattern;
};

} // namespace rpcscope
