//! Go's pattern-defeating quicksort (`sort.Sort`, `sort.Slice`, `slices.SortFunc`: one
//! algorithm since Go 1.19), step by step, so that elements the comparison cannot tell
//! apart end where Go leaves them (up to 12 elements it is an insertion sort, stable;
//! beyond that they move as its partitions, pivots and pattern breaking move them), and
//! a comparison that is no strict order (kubectl's `--sort-by`: an item without the
//! field is "less" than any other, itself included) gives Go's result. Used for kpt
//! HEAD's choice among equal versions of a `tag:` constraint and porchctl's `--sort-by`.

/// Go's `sort.Interface` (its three methods and no more).
#[allow(clippy::len_without_is_empty)]
pub trait Interface {
    fn len(&self) -> usize;
    fn less(&self, i: usize, j: usize) -> bool;
    fn swap(&mut self, i: usize, j: usize);
}

/// `sort.Slice(data, less)` / `slices.SortFunc(data, cmp)` with `less(a, b)` for
/// `cmp(a, b) < 0`.
pub fn sort_slice<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    struct Slice<'a, T, F> {
        data: &'a mut [T],
        less: F,
    }
    impl<T, F: Fn(&T, &T) -> bool> Interface for Slice<'_, T, F> {
        fn len(&self) -> usize {
            self.data.len()
        }
        fn less(&self, i: usize, j: usize) -> bool {
            (self.less)(&self.data[i], &self.data[j])
        }
        fn swap(&mut self, i: usize, j: usize) {
            self.data.swap(i, j);
        }
    }
    sort(&mut Slice { data, less });
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
