package console

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"

	"github.com/muster-io/muster/internal/lag"
	"github.com/muster-io/muster/internal/streams/topology"
)

// Drawings are SVG written here (no charting or graph library): a group's lag over time and a
// streams topology.

const (
	chartW, chartH         = 720.0, 200.0
	chartLeft, chartBottom = 64.0, 28.0
	chartTop, chartRight   = 12.0, 16.0
)

// lagChart draws a group's total and maximum partition lag over the samples.
func lagChart(pts []lag.ChartPoint) template.HTML {
	if len(pts) == 0 {
		return `<p class="muted">No lag samples yet.</p>`
	}
	var maxV int64 = 1
	for _, p := range pts {
		maxV = max(maxV, p.TotalLag, p.MaxLag)
	}
	t0, t1 := pts[0].At, pts[len(pts)-1].At
	span := max(t1-t0, 1)
	pw, ph := chartW-chartLeft-chartRight, chartH-chartTop-chartBottom
	x := func(at int64) float64 { return chartLeft + pw*float64(at-t0)/float64(span) }
	y := func(v int64) float64 { return chartTop + ph*(1-float64(v)/float64(maxV)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="lag over time">`, chartW, chartH)
	for i := 0; i <= 4; i++ {
		v := maxV * int64(i) / 4
		fmt.Fprintf(&b, `<line class="grid" x1="%g" y1="%.1f" x2="%g" y2="%.1f"/><text class="axis" x="%g" y="%.1f" text-anchor="end">%d</text>`,
			chartLeft, y(v), chartW-chartRight, y(v), chartLeft-6, y(v)+4, v)
	}
	fmt.Fprintf(&b, `<text class="axis" x="%g" y="%g">%s</text><text class="axis" x="%g" y="%g" text-anchor="end">%s</text>`,
		chartLeft, chartH-8, time.UnixMilli(t0).UTC().Format("15:04:05"), chartW-chartRight, chartH-8, time.UnixMilli(t1).UTC().Format("15:04:05 UTC"))
	line := func(class string, v func(lag.ChartPoint) int64) {
		fmt.Fprintf(&b, `<polyline class="%s" points="`, class)
		for i, p := range pts {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", x(p.At), y(v(p)))
		}
		b.WriteString(`"/>`)
	}
	line("total", func(p lag.ChartPoint) int64 { return p.TotalLag })
	line("max", func(p lag.ChartPoint) int64 { return p.MaxLag })
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// topologyGraph draws a description; nodes named in added are marked "added", in removed
// "removed" (the diff of a rolling upgrade), keyed "subtopology/name" as topology.Diff names them.
func topologyGraph(d *topology.Description, added, removed map[string]bool) template.HTML {
	l := d.Layout()
	sub := map[string]string{}
	for _, s := range d.Subtopologies {
		for _, n := range s.Nodes {
			sub[n.Name] = s.ID
		}
	}
	for _, g := range d.GlobalStores {
		sub[g.Source.Name], sub[g.Processor.Name] = "global", "global"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="topology" viewBox="0 0 %.0f %.0f" width="%.0f" role="img" aria-label="topology">`, l.Width, l.Height, l.Width)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker></defs>`)
	for _, g := range l.Groups {
		fmt.Fprintf(&b, `<g class="subtopology"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="8"/><text x="%.1f" y="%.1f">%s</text></g>`,
			g.X, g.Y, g.W, g.H, g.X+10, g.Y+18, html.EscapeString(g.Title))
	}
	for _, e := range l.Edges {
		my := (e.Y1 + e.Y2) / 2
		fmt.Fprintf(&b, `<path class="edge" d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" marker-end="url(#arrow)"/>`,
			e.X1, e.Y1, e.X1, my, e.X2, my, e.X2, e.Y2)
	}
	for _, n := range l.Nodes {
		key := sub[n.Name] + "/" + n.Name
		class := "node " + strings.ToLower(n.Type.String())
		switch {
		case added[key]:
			class += " added"
		case removed[key]:
			class += " removed"
		}
		fmt.Fprintf(&b, `<g class="%s" data-node="%s"><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="5"/>`,
			class, html.EscapeString(n.Name), html.EscapeString(n.Type.String()+" "+n.Name), n.X, n.Y, n.W, n.H)
		fmt.Fprintf(&b, `<text class="name" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, n.X+n.W/2, n.Y+17, html.EscapeString(clip(n.Name, 44)))
		if n.Detail != "" {
			fmt.Fprintf(&b, `<text class="detail" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, n.X+n.W/2, n.Y+32, html.EscapeString(n.Detail))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
