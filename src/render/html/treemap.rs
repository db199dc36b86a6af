//! Squarified treemap layout (Bruls, Huizing and van Wijk, "Squarified Treemaps",
//! 2000): pure geometry, no store paths and no markup. The HTML renderer calls
//! [`squarify`] once per dominator-tree node to place that node's children inside its
//! rectangle.
//!
//! Each call sorts the sizes (O(k log k) for k items) and then fills rows along the
//! shorter side of the free rectangle, adding an item to the current row while that
//! does not worsen the row's worst aspect ratio; the row's sum, minimum and maximum
//! are kept incrementally, so the layout after the sort is O(k). Over a whole tree the
//! calls cost O(n log n) for n nodes.
//!
//! Guarantees (unit-tested below): every rectangle lies inside the given one, no two
//! overlap, and each area is `size / Σ sizes` of the given rectangle's area, up to
//! floating-point rounding.

/// An axis-aligned rectangle: top-left corner, width and height.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    /// Width times height.
    pub fn area(&self) -> f64 {
        self.w * self.h
    }
}

/// Place `sizes` inside `bounds`, each with an area proportional to its size, the
/// whole of `bounds` filled. Returns one rectangle per size, in the order given.
/// Zero, negative and non-finite sizes get an empty rectangle at `bounds`' corner;
/// when no size is positive every rectangle is empty.
pub fn squarify(sizes: &[f64], bounds: Rect) -> Vec<Rect> {
    let empty = Rect {
        x: bounds.x,
        y: bounds.y,
        w: 0.0,
        h: 0.0,
    };
    let mut out = vec![empty; sizes.len()];
    let positive = |s: f64| s.is_finite() && s > 0.0;
    let total: f64 = sizes.iter().copied().filter(|&s| positive(s)).sum();
    if total <= 0.0 || bounds.area() <= 0.0 {
        return out;
    }
    // Largest first: the order the algorithm needs for good aspect ratios.
    let mut order: Vec<usize> = (0..sizes.len()).filter(|&i| positive(sizes[i])).collect();
    order.sort_by(|&a, &b| sizes[b].total_cmp(&sizes[a]).then(a.cmp(&b)));
    let scale = bounds.area() / total;
    let area = |i: usize| sizes[i] * scale;
    let mut free = bounds;
    let mut start = 0;
    while start < order.len() {
        let side = free.w.min(free.h);
        // Grow the row [start, end) while the worst aspect ratio does not get worse.
        let (mut sum, mut min, mut max) = (0.0f64, f64::INFINITY, 0.0f64);
        let mut end = start;
        while end < order.len() {
            let a = area(order[end]);
            let (s2, mn2, mx2) = (sum + a, min.min(a), max.max(a));
            if end > start && worst(s2, mn2, mx2, side) > worst(sum, min, max, side) {
                break;
            }
            (sum, min, max) = (s2, mn2, mx2);
            end += 1;
        }
        // The last row takes whatever is left, so rounding never leaves a gap.
        let last = end == order.len();
        let horizontal = free.w >= free.h; // the row is a column on the left
        if horizontal {
            let thick = if last { free.w } else { sum / free.h };
            let mut y = free.y;
            for (k, &i) in order[start..end].iter().enumerate() {
                let h = if k + 1 == end - start {
                    free.y + free.h - y
                } else {
                    area(i) / thick
                };
                out[i] = Rect {
                    x: free.x,
                    y,
                    w: thick,
                    h,
                };
                y += h;
            }
            free.x += thick;
            free.w = (free.w - thick).max(0.0);
        } else {
            let thick = if last { free.h } else { sum / free.w };
            let mut x = free.x;
            for (k, &i) in order[start..end].iter().enumerate() {
                let w = if k + 1 == end - start {
                    free.x + free.w - x
                } else {
                    area(i) / thick
                };
                out[i] = Rect {
                    x,
                    y: free.y,
                    w,
                    h: thick,
                };
                x += w;
            }
            free.y += thick;
            free.h = (free.h - thick).max(0.0);
        }
        start = end;
    }
    out
}

/// The worst aspect ratio of a row of areas with this sum, minimum and maximum laid
/// along a side of length `side` (the paper's `worst`).
fn worst(sum: f64, min: f64, max: f64, side: f64) -> f64 {
    if sum <= 0.0 {
        return f64::INFINITY;
    }
    let s2 = sum * sum;
    let w2 = side * side;
    (w2 * max / s2).max(s2 / (w2 * min))
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Rect = Rect {
        x: 10.0,
        y: 20.0,
        w: 1000.0,
        h: 600.0,
    };

    fn inside(r: &Rect, b: &Rect) -> bool {
        let e = 1e-6;
        r.x >= b.x - e && r.y >= b.y - e && r.x + r.w <= b.x + b.w + e && r.y + r.h <= b.y + b.h + e
    }

    fn overlap(a: &Rect, b: &Rect) -> f64 {
        let w = (a.x + a.w).min(b.x + b.w) - a.x.max(b.x);
        let h = (a.y + a.h).min(b.y + b.h) - a.y.max(b.y);
        w.max(0.0) * h.max(0.0)
    }

    fn check(sizes: &[f64], b: Rect) -> Vec<Rect> {
        let rs = squarify(sizes, b);
        assert_eq!(rs.len(), sizes.len());
        let total: f64 = sizes.iter().filter(|s| **s > 0.0).sum();
        for (r, s) in rs.iter().zip(sizes) {
            assert!(inside(r, &b), "{r:?} outside {b:?}");
            let want = s.max(0.0) / total * b.area();
            assert!(
                (r.area() - want).abs() <= 1e-6 * b.area(),
                "area {} for size {s}, want {want}",
                r.area()
            );
        }
        for i in 0..rs.len() {
            for j in i + 1..rs.len() {
                assert!(overlap(&rs[i], &rs[j]) < 1e-6, "{:?} {:?}", rs[i], rs[j]);
            }
        }
        rs
    }

    #[test]
    fn paper_example_fills_exactly() {
        // The example of the paper: 6, 6, 4, 3, 2, 2, 1 in a 6×4 rectangle.
        let b = Rect {
            x: 0.0,
            y: 0.0,
            w: 6.0,
            h: 4.0,
        };
        let rs = check(&[6.0, 6.0, 4.0, 3.0, 2.0, 2.0, 1.0], b);
        // The first row is the two 6s stacked on the left, 3 wide.
        assert!((rs[0].w - 3.0).abs() < 1e-9 && (rs[1].w - 3.0).abs() < 1e-9);
        let sum: f64 = rs.iter().map(Rect::area).sum();
        assert!((sum - 24.0).abs() < 1e-9);
    }

    #[test]
    fn proportional_nested_and_disjoint_on_many_shapes() {
        // A deterministic pseudo-random series of size lists, skewed like closures.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..200 {
            let k = 1 + (next() % 40) as usize;
            let sizes: Vec<f64> = (0..k)
                .map(|_| {
                    let e = next() % 30;
                    (1u64 << e) as f64 * (1.0 + (next() % 1000) as f64 / 1000.0)
                })
                .collect();
            let b = Rect {
                x: (round % 7) as f64,
                y: 3.0,
                w: 50.0 + (next() % 1500) as f64,
                h: 50.0 + (next() % 900) as f64,
            };
            let rs = check(&sizes, b);
            // Nesting: a child laid out inside one of these stays inside it too.
            let inner = check(&[3.0, 2.0, 1.0], rs[0]);
            assert!(inner.iter().all(|r| inside(r, &rs[0])));
        }
    }

    #[test]
    fn degenerate_inputs_give_empty_rectangles() {
        assert!(squarify(&[], B).is_empty());
        let rs = squarify(&[0.0, -1.0, f64::NAN], B);
        assert!(rs.iter().all(|r| r.area() == 0.0));
        let rs = check(&[0.0, 5.0, 0.0], B);
        assert!((rs[1].area() - B.area()).abs() < 1e-6);
        let flat = Rect { h: 0.0, ..B };
        assert!(squarify(&[1.0, 2.0], flat).iter().all(|r| r.area() == 0.0));
    }

    #[test]
    fn aspect_ratios_stay_reasonable_for_equal_sizes() {
        let rs = check(&[1.0; 64], B);
        for r in rs {
            let ratio = (r.w / r.h).max(r.h / r.w);
            assert!(ratio < 3.0, "{r:?}");
        }
    }
}
