import Testing

@testable import RigCore

/// Tap to focus: a point of the live view in the camera's AF coordinates, the view being the
/// middle of the camera's frame in the view's own aspect. Worked out by hand.
@Suite struct FocusGridTests {
    let sensor = FocusGrid(width: 6000, height: 4000)

    @Test func aNarrowerViewShowsTheFramesFullHeightAndTheMiddleOfItsWidth() {
        // 4:3 of a 3:2 frame: 4000 × 4/3 = 5333.3 px wide, from x = 333.3.
        let shown = sensor.shown(viewAspect: 4.0 / 3)
        #expect(abs(shown.x - 333.333) < 0.001 && shown.y == 0 && abs(shown.width - 5333.333) < 0.001 && shown.height == 4000)
        #expect(sensor.point(viewX: 0.5, viewY: 0.5, viewAspect: 4.0 / 3) == (3000, 2000))
        #expect(sensor.point(viewX: 0, viewY: 0, viewAspect: 4.0 / 3) == (333, 0))
        // 333.3 + 0.25 × 5333.3 = 1666.7; 0.9 × 4000 = 3600.
        #expect(sensor.point(viewX: 0.25, viewY: 0.9, viewAspect: 4.0 / 3) == (1667, 3600))
        // The far edges stay on the frame's last pixel.
        #expect(sensor.point(viewX: 1, viewY: 1, viewAspect: 4.0 / 3) == (5667, 3999))
    }

    @Test func aWiderViewShowsTheFramesFullWidthAndTheMiddleOfItsHeight() {
        // 16:9 of a 3:2 frame: 6000 × 9/16 = 3375 px high, from y = 312.5.
        #expect(sensor.point(viewX: 0.5, viewY: 0, viewAspect: 16.0 / 9) == (3000, 313))
        #expect(sensor.point(viewX: 0.1, viewY: 0.5, viewAspect: 16.0 / 9) == (600, 2000))
        // Its own aspect: the whole frame.
        #expect(sensor.point(viewX: 0.25, viewY: 0.75, viewAspect: 1.5) == (1500, 3000))
    }

    @Test func aFramePointIsBackWhereTheViewShowsIt() {
        for (x, y) in [(0.5, 0.5), (0.1, 0.8), (0.93, 0.07)] {
            for aspect in [4.0 / 3, 1.5, 16.0 / 9, 1.0] {
                let p = sensor.point(viewX: x, viewY: y, viewAspect: aspect)
                let back = sensor.viewPoint(x: p.x, y: p.y, viewAspect: aspect)
                // Within the rounding to whole pixels.
                #expect(abs(back.x - x) < 1e-3 && abs(back.y - y) < 1e-3, "\(x), \(y) at \(aspect): \(back)")
            }
        }
        // A point of the frame outside a 4:3 view's crop is outside 0…1.
        #expect(sensor.viewPoint(x: 100, y: 2000, viewAspect: 4.0 / 3).x < 0)
    }
}
