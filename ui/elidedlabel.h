#pragma once

#include <QLabel>

namespace rpcscope {

/**
 * A one-line label that never asks for more width than it gets: its text is elided in the middle to fit (the whole
 * text on hover), never clipped and never run into the widget beside it. text() stays the whole text.
 */
class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    using QLabel::QLabel;

    QSize minimumSizeHint() const override;
    /// True when the text does not fit and is drawn elided.
    bool isElided() const;

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;
};

} // namespace rpcscope
