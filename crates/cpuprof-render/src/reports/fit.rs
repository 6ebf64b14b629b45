//! Tables fitted to a terminal's width: the number columns as they are, the name and location
//! columns sharing the rest. Locations are shortened first (relative to the current directory,
//! then their folders' middle, then to `file:line`), then names lose their middle; neither goes
//! below a readable minimum (a line that still cannot fit wraps, as it would have).

use crate::text::{columns, truncate_middle};

/// The narrowest a name is cut to.
pub(crate) const NAME_MIN: usize = 16;

/// The narrowest a location is cut to.
pub(crate) const LOCATION_MIN: usize = 14;

/// A location narrower than this keeps only its file and line (no folders cut in the middle).
const FOLDERS_MIN: usize = 28;

/// Where a text report is shown: how wide it may be, the directory its paths are shown
/// relative to when they must be shortened, and whether it may have colour.
#[derive(Clone, Copy, Debug, Default)]
pub struct Terminal<'a> {
    /// The terminal's width in columns; `None`: no limit (a file, a pipe, `--wide`).
    pub width: Option<usize>,
    /// The current directory, as paths in the profile spell it.
    pub cwd: Option<&'a str>,
    /// Colour with meaning (a person at a terminal, without `NO_COLOR`).
    pub color: bool,
}

/// The width of a table of comfy-table's `UTF8_BORDERS_ONLY` preset whose cells are `cells`
/// wide: `│ a   b │`, a padding column each side of a cell and a blank between cells.
pub(crate) fn table_columns(cells: &[usize]) -> usize {
    2 + cells.iter().map(|w| w + 2).sum::<usize>() + cells.len().saturating_sub(1)
}

/// How wide a table's name and location columns may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) name: usize,
    pub(crate) location: usize,
}

impl Budget {
    /// The name and location columns (`location` 0: the table has none) of a table whose other
    /// columns are `fixed` wide, fitted to `width`; `None` without a width (no limit).
    pub(crate) fn of(width: Option<usize>, fixed: &[usize], name: usize, location: Option<usize>) -> Option<Self> {
        let width = width?;
        let mut cells = fixed.to_vec();
        cells.push(0);
        if location.is_some() {
            cells.push(0);
        }
        let room = width.saturating_sub(table_columns(&cells));
        let location = location.unwrap_or(0);
        if name + location <= room {
            return Some(Self { name, location });
        }
        let location = room.saturating_sub(name).max(location.min(LOCATION_MIN));
        let name = room.saturating_sub(location).max(name.min(NAME_MIN));
        Some(Self { name, location })
    }

    /// Whether a table whose other columns are `fixed` wide leaves its name and location
    /// columns (`name` and `location` wide at most) their minimum in `width`.
    pub(crate) fn fits(width: Option<usize>, fixed: &[usize], name: usize, location: Option<usize>) -> bool {
        let Some(width) = width else { return true };
        let mut cells = fixed.to_vec();
        cells.push(name.min(NAME_MIN));
        cells.extend(location.map(|l| l.min(LOCATION_MIN)));
        table_columns(&cells) <= width
    }
}

/// `name` cut to `max` columns from its middle.
pub(crate) fn name(name: &str, max: Option<usize>) -> String {
    match max {
        Some(max) => truncate_middle(name, max),
        None => name.to_owned(),
    }
}

/// `location` (`path:line[:column]`) shortened to `max` columns: relative to `cwd` (given when
/// the column is cut, so that all its paths read alike), then with the middle of its folders
/// cut, then as `file:line` alone (cut from the middle if need be).
pub(crate) fn location(location: &str, max: Option<usize>, cwd: Option<&str>) -> String {
    let relative = cwd
        .filter(|d| !d.is_empty())
        .and_then(|d| location.strip_prefix(d.trim_end_matches('/')))
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(location);
    let Some(max) = max.filter(|max| columns(relative) > *max) else { return relative.to_owned() };
    let file_at = relative.rfind(['/', '\\']).map_or(0, |i| i + 1);
    let (folders, file) = relative.split_at(file_at);
    if max >= FOLDERS_MIN {
        if let Some(cut) = folders_cut(folders, max.saturating_sub(columns(file))) {
            return format!("{cut}{file}");
        }
    }
    truncate_middle(file, max)
}

/// `folders` (`/srv/app/lib/`) in at most `max` columns with whole folders left out of their
/// middle: the first, `…/`, and as many of the last as fit (`/srv/…/lib/`); else without the
/// first (`…/lib/`); `None` when not even one folder fits.
fn folders_cut(folders: &str, max: usize) -> Option<String> {
    let parts: Vec<&str> = folders.split_inclusive(['/', '\\']).collect();
    // The first folder, with the root's `/` before it.
    let first = parts.iter().position(|p| p.len() > 1).map_or(parts.len(), |i| i + 1);
    let (head, rest) = parts.split_at(first.min(parts.len()));
    let head: String = head.concat();
    let with = |head: &str| {
        let room = max.checked_sub(columns(head) + 2)?;
        let mut used = 0;
        let tail: Vec<&str> = rest
            .iter()
            .rev()
            .take_while(|p| {
                used += columns(p);
                used <= room
            })
            .copied()
            .collect();
        (!tail.is_empty()).then(|| format!("{head}…/{}", tail.into_iter().rev().collect::<String>()))
    };
    with(&head).or_else(|| with("")).or_else(|| (columns(&head) + 2 <= max).then(|| format!("{head}…/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_location_goes_first_then_the_name() {
        // Room for 30 beyond the numbers: the location gives way.
        let fixed = [7, 5];
        let room = 60 - table_columns(&[7, 5, 0, 0]);
        assert_eq!(Budget::of(Some(60), &fixed, 10, Some(50)), Some(Budget { name: 10, location: room - 10 }));
        // A long name and a long location: the location at its minimum, the name gets the rest.
        assert_eq!(
            Budget::of(Some(60), &fixed, 80, Some(50)),
            Some(Budget { name: room - LOCATION_MIN, location: LOCATION_MIN })
        );
        // Nothing fits: both at their minimum (the line wraps).
        assert_eq!(Budget::of(Some(20), &fixed, 80, Some(50)), Some(Budget { name: NAME_MIN, location: LOCATION_MIN }));
        // Enough room, or no width: as they are.
        assert_eq!(Budget::of(Some(200), &fixed, 80, Some(50)), Some(Budget { name: 80, location: 50 }));
        assert_eq!(Budget::of(None, &fixed, 80, Some(50)), None);
        // No location column: the name has it all.
        assert_eq!(
            Budget::of(Some(60), &fixed, 80, None),
            Some(Budget { name: 60 - table_columns(&[7, 5, 0]), location: 0 })
        );
    }

    #[test]
    fn locations_shorten_in_steps() {
        let loc = "/srv/app/node_modules/@acme/money/lib/format.js:12:5";
        assert_eq!(location(loc, None, None), loc);
        assert_eq!(location(loc, Some(80), None), loc);
        assert_eq!(location(loc, Some(80), Some("/srv/app")), "node_modules/@acme/money/lib/format.js:12:5");
        assert_eq!(location(loc, Some(45), Some("/srv/app/")), "node_modules/@acme/money/lib/format.js:12:5");
        assert_eq!(location(loc, Some(30), Some("/elsewhere")), "/srv/…/lib/format.js:12:5");
        assert_eq!(location(loc, Some(40), None), "/srv/…/@acme/money/lib/format.js:12:5");
        assert_eq!(folders_cut("/srv/app/lib/", 7), Some("…/lib/".to_owned()));
        assert_eq!(folders_cut("/srv/app/lib/", 4), None);
        assert_eq!(folders_cut("/srv/a-very-long-folder/", 8), Some("/srv/…/".to_owned()));
        assert_eq!(location(loc, Some(20), None), "format.js:12:5");
        assert_eq!(columns(&location(loc, Some(10), None)), 10);
    }
}
