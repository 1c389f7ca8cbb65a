//! The toolbox's AVX2 steps against their plain counterparts.

use proptest::prelude::*;

use super::*;

proptest! {
    /// Eight groups' ends tested at once are tested lane by lane, on ends with zeros of
    /// both signs and magnitudes equal, one sign apart or not.
    #[test]
    fn eight_groups_ends_are_each_groups(
        ends in prop::array::uniform8((
            prop_oneof![Just(0.0f32), Just(-0.0), Just(1.5), Just(-1.5), -2.0f32..2.0],
            prop_oneof![Just(0.0f32), Just(-0.0), Just(1.5), Just(-1.5), -2.0f32..2.0],
        )),
    ) {
        let lo = ends.map(|(a, _)| a);
        let hi = ends.map(|(_, b)| b);
        let (any, extreme) = ends8(Avx2::detect(), &lo, &hi);
        let (any_lanes, extreme_lanes) = ends8_lanes(&lo, &hi);
        prop_assert_eq!(any, any_lanes);
        prop_assert_eq!(extreme.map(f32::to_bits), extreme_lanes.map(f32::to_bits));
    }
}

#[test]
fn flags_are_the_masks_bits() {
    for mask in 0..256u32 {
        let want: [bool; LANES] = std::array::from_fn(|j| mask >> j & 1 != 0);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(avx2::flags(mask), want, "mask {mask:#x}");
    }
}

#[test]
fn eight_rows_transpose() {
    let rows: [[f32; LANES]; LANES] =
        std::array::from_fn(|i| std::array::from_fn(|j| (i * 10 + j) as f32));
    let t = transpose8(Avx2::detect(), rows);
    for i in 0..LANES {
        for j in 0..LANES {
            assert_eq!(t[j][i], rows[i][j], "row {i} value {j}");
        }
    }
}
