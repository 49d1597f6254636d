#pragma once

#include "profile/profile.h"

#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QSplitter;
class QTableWidget;

namespace rpcscope {

class FlameGraphView;

/**
 * A CPU profile as a page shows it: a summary line (CPU per call, calls, processes, how it was recorded, the
 * profiler's own CPU, what went wrong), the flame graph, and the functions in a table under it. For one run
 * (showProfile()) the table lists the functions by self time per call; for two (showDiff()) the graph is the
 * differential one and the table the functions that changed, A and B in us per call with the interval of B - A,
 * judged per server process as the verdict is (diffProfiles()). Selecting a function in the table searches for it
 * in the graph. "Save SVG..." writes the graph as the CLI's `-O flamegraph` does.
 */
class ProfilePanel : public QWidget {
    Q_OBJECT
public:
    explicit ProfilePanel(QWidget *parent = nullptr);
    ~ProfilePanel() override;

    /// One run's profile; @p title names it in the graph's file ("run 12, server").
    void showProfile(const Profile &profile, const QString &title = QString());
    /// B's profile against A's, named @p baseName and @p newName in the legend, tooltips and table.
    void showDiff(const Profile &a, const Profile &b, const QString &baseName, const QString &newName,
        const QString &title = QString());
    /// No profile: @p message in the graph's place, the table empty.
    void clear(const QString &message);

    FlameGraphView *graph() const { return m_graph; }
    QTableWidget *table() const { return m_table; }
    QLabel *summaryLabel() const { return m_summary; }
    /// The comparison shown by showDiff(); unset otherwise.
    const std::optional<ProfileDiff> &diff() const { return m_diff; }
    /// The graph as an SVG document, as "Save SVG..." writes it (empty when no graph is shown).
    QByteArray svg() const;
    /// "Open in hotspot": shown for a profile whose perf recording was kept (--profile-keep), enabled when hotspot
    /// is installed and the recording is rpcscope's own and still there (its tooltip says why not).
    QPushButton *hotspotButton() const { return m_hotspot; }

private:
    void fillCosts(const Profile &profile);
    void fillChanges(const ProfileDiff &diff);
    void searchSelected();
    void saveSvg();
    /// The hotspot button for @p perfData (empty: hidden).
    void offerHotspot(const QString &perfData);
    void openInHotspot();

    QLabel *m_summary;
    QPushButton *m_save;
    QPushButton *m_hotspot;
    QString m_perfData; ///< what "Open in hotspot" opens
    QSplitter *m_split;
    FlameGraphView *m_graph;
    QTableWidget *m_table;
    std::optional<ProfileDiff> m_diff;
    QString m_title;
    QString m_baseName = QStringLiteral("A");
    QString m_newName = QStringLiteral("B");
};

} // namespace rpcscope
