#pragma once

#include "sliderender.h"

#include <QList>
#include <QWidget>

#include <memory>

namespace rpcscope {

class ComparePage;

/**
 * The comparisons of the Compare runs page as slides, full screen, for a room: one slide per candidate against the
 * baseline (Slide: the verdict as the headline, the distributions, the dots, the key numbers, what differs; then, when
 * both runs were profiled, where B's time went). Left and Right (or a presenter's Page Up/Down) move page by page, Esc
 * or F11 leave, Ctrl+S or the context menu save the page shown as PNG, or the comparison's pages as PDF. The slide is
 * drawn scaled to the screen, its proportions kept.
 */
class PresentationView : public QWidget {
    Q_OBJECT
public:
    /// Slides of @p specs, showing @p current first.
    explicit PresentationView(QList<SlideSpec> specs, int current = 0, QWidget *parent = nullptr);
    ~PresentationView() override;

    /**
     * What @p page compares as slides: with two runs, the one comparison; with more, each run against the baseline,
     * in the page's order. The page's colours, its threshold and, for the pair it shows, its comparison. @p current
     * gets the index of the page's candidate. Empty with fewer than two runs.
     */
    static QList<SlideSpec> slidesOf(ComparePage *page, int *current = nullptr);
    /**
     * Opens the slides of @p page full screen (a window of @p page's window, gone when closed) and returns it; with
     * fewer than two runs to compare, says so and returns nullptr.
     */
    static PresentationView *present(ComparePage *page);

    /// The comparisons (each a slide of one or two pages).
    int count() const { return static_cast<int>(m_specs.size()); }
    int currentIndex() const { return m_current; }
    /// Shows comparison @p index from its first page (its last with @p lastPage).
    void setCurrentIndex(int index, bool lastPage = false);
    /// The page of the slide shown (0: the verdict; 1: where B's time went).
    int page() const { return m_page; }
    /// The next page, else the next comparison's first; the previous page, else the previous comparison's last.
    void next();
    void previous();
    /// The slide shown.
    const Slide *slide() const { return m_slide.get(); }

    /// Writes the page shown to @p path as PNG (at @p scale device pixels a pixel), or the slide's pages as PDF, whole
    /// or not at all.
    bool saveSlide(const QString &path, SlideFormat format, double scale, QString *error) const;
    /// Asks where, then saves: the filter picks PNG, PNG at twice the size, or PDF.
    void saveWithDialog(int filter = 0);

Q_SIGNALS:
    void currentChanged(int index);

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;

private:
    QList<SlideSpec> m_specs;
    int m_current = -1;
    int m_page = 0;
    std::unique_ptr<Slide> m_slide;
};

} // namespace rpcscope
