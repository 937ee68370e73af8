// The floor under rig's camera path: the same libgphoto2 calls rig makes for one shot
// (drain pending events, trigger, wait for the new file, then for capture-complete or a
// quiet 200 ms), back to back, with nothing else; and, as rig does after a shot when its
// last reading is a minute old (so after the first), the battery level, outside the
// timed span. That one read changes the virtual camera's later events (each drain then
// takes longer), so a floor without it is not the same work. `rig bench camera` compiles it with cc
// and runs it beside rig's own camera code on the same camera:
//
//   cc -O2 -o /tmp/gphoto2_floor Benchmarks/c/gphoto2_floor.c $(pkg-config --cflags --libs libgphoto2)
//   /tmp/gphoto2_floor 12        # prints {"shotMs": [...]}: each shot, drain to capture-complete
//
// Not part of rig's build; a yardstick for docs/performance.md.
#include <gphoto2/gphoto2.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    int shots = argc > 1 ? atoi(argv[1]) : 12;
    if (shots < 1 || shots > 1000) { fprintf(stderr, "shots: 1…1000\n"); return 2; }
    GPContext *context = gp_context_new();
    Camera *camera = NULL;
    gp_camera_new(&camera);
    int r = gp_camera_init(camera, context);
    if (r < GP_OK) { fprintf(stderr, "gp_camera_init: %s\n", gp_result_as_string(r)); return 1; }
    double *ms = calloc(shots, sizeof(double));
    double battery_at = -1e12;
    for (int i = 0; i < shots; i++) {
        CameraEventType type;
        void *data = NULL;
        double start = now_ms();
        for (int k = 0; k < 50; k++) {  // drain, as rig does before each shot
            data = NULL;
            if (gp_camera_wait_for_event(camera, 1, &type, &data, context) < GP_OK) break;
            free(data);
            if (type == GP_EVENT_TIMEOUT) break;
        }
        r = gp_camera_trigger_capture(camera, context);
        if (r < GP_OK) { fprintf(stderr, "trigger: %s\n", gp_result_as_string(r)); return 1; }
        int have_file = 0;
        for (;;) {
            data = NULL;
            r = gp_camera_wait_for_event(camera, have_file ? 200 : 1001, &type, &data, context);
            if (r < GP_OK) { fprintf(stderr, "wait: %s\n", gp_result_as_string(r)); return 1; }
            free(data);
            if (type == GP_EVENT_FILE_ADDED && !have_file) have_file = 1;
            else if ((type == GP_EVENT_CAPTURE_COMPLETE || type == GP_EVENT_TIMEOUT) && have_file) { ms[i] = now_ms() - start; break; }
            else if (type == GP_EVENT_TIMEOUT && now_ms() - start > 30000) { fprintf(stderr, "no file in 30 s\n"); return 1; }
        }
        if (now_ms() - battery_at > 60000) {  // rig's refreshBattery: at most once a minute
            CameraWidget *widget = NULL;
            if (gp_camera_get_single_config(camera, "batterylevel", &widget, context) >= GP_OK) gp_widget_free(widget);
            battery_at = now_ms();
        }
    }
    printf("{\"shotMs\": [");
    for (int i = 0; i < shots; i++) printf("%s%.3f", i ? ", " : "", ms[i]);
    printf("]}\n");
    gp_camera_exit(camera, context);
    gp_camera_unref(camera);
    gp_context_unref(context);
    free(ms);
    return 0;
}
