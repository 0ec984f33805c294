/* report_html_axis.c — what the page's charts share: value axes with round ticks, the grid,
 * legends, and bar charts that stay light (at most HTML_MAX_BARS bars, the means of
 * consecutive entries beyond that). Used by report_html_svg.c and report_html_ranks.c. */
#include "report_html.h"

#include <math.h>

#define U(x) ((unsigned long long)(x))

/* Contract in report_html.h. */
double html_nice_step(double x)
{
    if (!(x > 0))
        return 1;
    double raw = x / 5, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static html_axis axis_make(double max, double unit, const char *uname)
{
    html_axis a = {.unit = unit, .uname = uname};
    double m = max / unit;
    a.step = html_nice_step(m > 0 ? m : 1);
    a.max = ceil((m > 0 ? m : 1) / a.step - 1e-9) * a.step;
    if (a.max <= 0)
        a.max = a.step;
    return a;
}

/* Contract in report_html.h. */
html_axis html_axis_bytes(double max)
{
    return max >= 1073741824.0 ? axis_make(max, 1073741824.0, "GiB")
           : max >= 1048576.0  ? axis_make(max, 1048576.0, "MiB")
           : max >= 1024.0     ? axis_make(max, 1024.0, "KiB")
                               : axis_make(max, 1.0, "B");
}

/* Contract in report_html.h. */
html_axis html_axis_us(double max)
{
    return max >= 2e6   ? axis_make(max, 1e6, "s")
           : max >= 2e3 ? axis_make(max, 1e3, "ms")
                        : axis_make(max, 1.0, "us");
}

/* Contract in report_html.h. */
double html_y_of(const html_axis *a, double v, double y_bottom, double h)
{
    double f = v / a->unit / a->max;
    f = f < 0 ? 0 : f > 1.02 ? 1.02 : f;
    return y_bottom - f * h;
}

/* Contract in report_html.h. */
void html_grid_y(FILE *out, const html_axis *a, double x0, double x1, double y_bottom, double h)
{
    fprintf(out, "<g class=\"grid y\">");
    for (int i = 0; i * a->step <= a->max * (1 + 1e-9) && i < 50; i++) {
        double v = i * a->step, y = y_bottom - v / a->max * h;
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x0, x1, y, y);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g %s</text>", x0 - 6, y + 4,
                v, a->uname);
    }
    fprintf(out, "</g>\n");
}

/* Contract in report_html.h. */
void html_legend(FILE *out, const char *const *cls, const char *const *labels, size_t n)
{
    fprintf(out, "<figcaption class=\"legend\">");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "<span><i class=\"sw %s\"></i>%s</span>", cls[i], labels[i]);
    fprintf(out, "</figcaption>\n");
}

/* Contract in report_html.h. */
html_bars html_bars_make(size_t entries, size_t max_bars)
{
    html_bars b = {entries, 1};
    if (max_bars == 0)
        max_bars = 1;
    if (entries > max_bars) {
        b.per = (entries + max_bars - 1) / max_bars;
        b.n = (entries + b.per - 1) / b.per;
    }
    return b;
}

/* Contract in report_html.h. */
void html_bar_labels(FILE *out, size_t nbars, double x0, double w, const uint64_t *labels)
{
    size_t every = nbars > 20 ? (nbars + 19) / 20 : 1;
    fprintf(out, "<g class=\"grid x\">");
    for (size_t i = 0; i < nbars; i += every)
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%llu</text>",
                x0 + (i + 0.5) * w, HTML_BAR_BOTTOM + 16, U(labels[i]));
    fprintf(out, "</g>\n");
}
