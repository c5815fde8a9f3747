//! Go's `sort.Sort` (pattern-defeating quicksort, Go 1.19 and later), step by step: the
//! order kubectl's `--sort-by` leaves equal keys in, and what it makes of its own
//! `Less`, which is not a strict order (an item without the field is "less" than any
//! other, another such item included). A stable sort would order ties differently once
//! a list is longer than 12 items.

/// Go's `sort.Interface`.
pub trait Interface {
    fn len(&self) -> usize;
    fn less(&self, i: usize, j: usize) -> bool;
    fn swap(&mut self, i: usize, j: usize);
}

/// `sort.Sort(data)`.
pub fn sort(data: &mut impl Interface) {
    let n = data.len();
    if n <= 1 {
        return;
    }
    // bits.Len(n)
    let limit = (usize::BITS - n.leading_zeros()) as usize;
    pdqsort(data, 0, n, limit);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

fn insertion_sort(data: &mut impl Interface, a: usize, b: usize) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && data.less(j, j - 1) {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sift_down(data: &mut impl Interface, lo: usize, hi: usize, first: usize) {
    let mut root = lo;
    loop {
        let mut child = 2 * root + 1;
        if child >= hi {
            return;
        }
        if child + 1 < hi && data.less(first + child, first + child + 1) {
            child += 1;
        }
        if !data.less(first + root, first + child) {
            return;
        }
        data.swap(first + root, first + child);
        root = child;
    }
}

fn heap_sort(data: &mut impl Interface, a: usize, b: usize) {
    let first = a;
    let hi = b - a;
    // Build the heap with the greatest element at the top.
    for i in (0..=(hi - 1) / 2).rev() {
        sift_down(data, i, hi, first);
    }
    for i in (0..hi).rev() {
        data.swap(first, first + i);
        sift_down(data, 0, i, first);
    }
}

fn pdqsort(data: &mut impl Interface, mut a: usize, mut b: usize, mut limit: usize) {
    const MAX_INSERTION: usize = 12;
    let mut was_balanced = true;
    let mut was_partitioned = true;
    loop {
        let length = b - a;
        if length <= MAX_INSERTION {
            insertion_sort(data, a, b);
            return;
        }
        // Too many bad pivots: fall back to heapsort.
        if limit == 0 {
            heap_sort(data, a, b);
            return;
        }
        if !was_balanced {
            break_patterns(data, a, b);
            limit -= 1;
        }
        let (mut pivot, mut hint) = choose_pivot(data, a, b);
        if hint == Hint::Decreasing {
            reverse_range(data, a, b);
            pivot = (b - 1) - (pivot - a);
            hint = Hint::Increasing;
        }
        if was_balanced
            && was_partitioned
            && hint == Hint::Increasing
            && partial_insertion_sort(data, a, b)
        {
            return;
        }
        // The pivot equals the element before this range: everything equal to it goes
        // left, and only the rest needs sorting.
        if a > 0 && !data.less(a - 1, pivot) {
            a = partition_equal(data, a, b, pivot);
            continue;
        }
        let (mid, already) = partition(data, a, b, pivot);
        was_partitioned = already;
        let (left, right) = (mid - a, b - mid);
        let balance_threshold = length / 8;
        if left < right {
            was_balanced = left >= balance_threshold;
            pdqsort(data, a, mid, limit);
            a = mid + 1;
        } else {
            was_balanced = right >= balance_threshold;
            pdqsort(data, mid + 1, b, limit);
            b = mid;
        }
    }
}

fn partition(data: &mut impl Interface, a: usize, b: usize, pivot: usize) -> (usize, bool) {
    data.swap(a, pivot);
    // i and j are inclusive bounds of what remains; j may reach a (never below it).
    let (mut i, mut j) = (a + 1, b - 1);
    while i <= j && data.less(i, a) {
        i += 1;
    }
    while i <= j && !data.less(j, a) {
        j -= 1;
    }
    if i > j {
        data.swap(j, a);
        return (j, true);
    }
    data.swap(i, j);
    i += 1;
    j -= 1;
    loop {
        while i <= j && data.less(i, a) {
            i += 1;
        }
        while i <= j && !data.less(j, a) {
            j -= 1;
        }
        if i > j {
            break;
        }
        data.swap(i, j);
        i += 1;
        j -= 1;
    }
    data.swap(j, a);
    (j, false)
}

fn partition_equal(data: &mut impl Interface, a: usize, b: usize, pivot: usize) -> usize {
    data.swap(a, pivot);
    let (mut i, mut j) = (a + 1, b - 1);
    loop {
        while i <= j && !data.less(a, i) {
            i += 1;
        }
        while i <= j && data.less(a, j) {
            j -= 1;
        }
        if i > j {
            break;
        }
        data.swap(i, j);
        i += 1;
        j -= 1;
    }
    i
}

fn partial_insertion_sort(data: &mut impl Interface, a: usize, b: usize) -> bool {
    const MAX_STEPS: usize = 5;
    const SHORTEST_SHIFTING: usize = 50;
    let mut i = a + 1;
    for _ in 0..MAX_STEPS {
        while i < b && !data.less(i, i - 1) {
            i += 1;
        }
        if i == b {
            return true;
        }
        if b - a < SHORTEST_SHIFTING {
            return false;
        }
        data.swap(i, i - 1);
        // Shift the smaller one to the left (Go runs this down to index 1, not to `a`).
        if i - a >= 2 {
            let mut j = i - 1;
            while j >= 1 {
                if !data.less(j, j - 1) {
                    break;
                }
                data.swap(j, j - 1);
                j -= 1;
            }
        }
        // Shift the greater one to the right.
        if b - i >= 2 {
            let mut j = i + 1;
            while j < b {
                if !data.less(j, j - 1) {
                    break;
                }
                data.swap(j, j - 1);
                j += 1;
            }
        }
    }
    false
}

fn break_patterns(data: &mut impl Interface, a: usize, b: usize) {
    let length = b - a;
    if length >= 8 {
        let mut random = length as u64;
        // nextPowerOfTwo: 1 << bits.Len(length)
        let modulus = 1usize << (usize::BITS - length.leading_zeros());
        let mid = a + (length / 4) * 2;
        for idx in mid - 1..=mid + 1 {
            random ^= random << 13;
            random ^= random >> 17;
            random ^= random << 5;
            let mut other = (random as usize) & (modulus - 1);
            if other >= length {
                other -= length;
            }
            data.swap(idx, a + other);
        }
    }
}

fn choose_pivot(data: &mut impl Interface, a: usize, b: usize) -> (usize, Hint) {
    const SHORTEST_NINTHER: usize = 50;
    const MAX_SWAPS: usize = 4 * 3;
    let l = b - a;
    let mut swaps = 0;
    let mut i = a + l / 4;
    let mut j = a + l / 4 * 2;
    let mut k = a + l / 4 * 3;
    if l >= 8 {
        if l >= SHORTEST_NINTHER {
            i = median_adjacent(data, i, &mut swaps);
            j = median_adjacent(data, j, &mut swaps);
            k = median_adjacent(data, k, &mut swaps);
        }
        j = median(data, i, j, k, &mut swaps);
    }
    match swaps {
        0 => (j, Hint::Increasing),
        MAX_SWAPS => (j, Hint::Decreasing),
        _ => (j, Hint::Unknown),
    }
}

fn order2(data: &impl Interface, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
    if data.less(b, a) {
        *swaps += 1;
        return (b, a);
    }
    (a, b)
}

fn median(data: &impl Interface, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
    let (a, b) = order2(data, a, b, swaps);
    let (b, _) = order2(data, b, c, swaps);
    let (_, b) = order2(data, a, b, swaps);
    b
}

fn median_adjacent(data: &impl Interface, a: usize, swaps: &mut usize) -> usize {
    median(data, a - 1, a, a + 1, swaps)
}

fn reverse_range(data: &mut impl Interface, a: usize, b: usize) {
    let (mut i, mut j) = (a, b - 1);
    while i < j {
        data.swap(i, j);
        i += 1;
        j -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::go_oracle;

    /// Keys with kubectl's `Less` over them: `None` (no field) is less than anything,
    /// another `None` included; the permutation records where each item came from.
    struct Keyed {
        keys: Vec<Option<u8>>,
        order: Vec<usize>,
    }

    impl Interface for Keyed {
        fn len(&self) -> usize {
            self.keys.len()
        }
        fn less(&self, i: usize, j: usize) -> bool {
            match (self.keys[i], self.keys[j]) {
                (None, _) => true,
                (_, None) => false,
                (Some(a), Some(b)) => a < b,
            }
        }
        fn swap(&mut self, i: usize, j: usize) {
            self.keys.swap(i, j);
            self.order.swap(i, j);
        }
    }

    const PROGRAM: &str = r#"package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Keys as the Rust side has them: "-" is a missing field.
type keyed struct {
	keys  []string
	order []int
}

func (k *keyed) Len() int { return len(k.keys) }
func (k *keyed) Less(i, j int) bool {
	if k.keys[i] == "-" {
		return true
	}
	if k.keys[j] == "-" {
		return false
	}
	var a, b int
	fmt.Sscan(k.keys[i], &a)
	fmt.Sscan(k.keys[j], &b)
	return a < b
}
func (k *keyed) Swap(i, j int) {
	k.keys[i], k.keys[j] = k.keys[j], k.keys[i]
	k.order[i], k.order[j] = k.order[j], k.order[i]
}

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for {
		line, err := in.ReadString(0)
		if err == io.EOF {
			return
		}
		in.ReadString('\n')
		line = strings.TrimSuffix(line, "\x00")
		k := &keyed{}
		if line != "" {
			k.keys = strings.Split(line, " ")
		}
		for i := range k.keys {
			k.order = append(k.order, i)
		}
		sort.Sort(k)
		for i, o := range k.order {
			if i > 0 {
				out.WriteString(" ")
			}
			fmt.Fprint(out, o)
		}
		out.WriteString("\x00\n")
	}
}
"#;

    #[test]
    fn orders_as_gos_sort_sort() {
        let dir = tempfile::tempdir().expect("tempdir");
        let Some(bin) = go_oracle::build(dir.path(), PROGRAM, "gosort", "", "golang-go") else {
            return;
        };
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut cases: Vec<Vec<Option<u8>>> = Vec::new();
        for n in 0..3000 {
            let len = match n % 4 {
                0 => 1 + (next() % 14) as usize,
                1 => 1 + (next() % 60) as usize,
                _ => 1 + (next() % 300) as usize,
            };
            let distinct = 1 + next() % 40;
            let shape = next() % 5;
            let missing = next() % 4 == 0;
            let keys = (0..len)
                .map(|i| {
                    if missing && next() % 6 == 0 {
                        return None;
                    }
                    let v = match shape {
                        0 => next() % distinct,
                        1 => i as u64 % distinct,
                        2 => (len - i) as u64 % distinct,
                        3 => (i as u64 / 7) % distinct,
                        _ => (i as u64 * 31 + next() % 3) % distinct,
                    };
                    Some(v as u8)
                })
                .collect();
            cases.push(keys);
        }
        let inputs: Vec<String> = cases
            .iter()
            .map(|k| {
                k.iter()
                    .map(|v| v.map_or("-".to_string(), |v| v.to_string()))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let answers = go_oracle::answers(&bin, &inputs);
        let mut differ = 0;
        for (keys, want) in cases.into_iter().zip(&answers) {
            let n = keys.len();
            let mut data = Keyed {
                keys: keys.clone(),
                order: (0..n).collect(),
            };
            sort(&mut data);
            let got = data
                .order
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" ");
            if &got != want {
                differ += 1;
                if differ < 5 {
                    eprintln!("{keys:?}\n  go:   {want}\n  ours: {got}");
                }
            }
        }
        assert_eq!(differ, 0, "{differ} of {} orders differ", answers.len());
    }
}
