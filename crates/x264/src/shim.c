/* A narrow C face on x264 for the Rust side: it fills x264_param_t, whose layout changes between
 * x264 releases, so the Rust code never mirrors it. */
#include <stdint.h>
#include <stdlib.h>
#include "x264.h"

typedef struct {
    int width, height, fps, keyint, threads, bframes;
    float crf;
    const char *preset;
    /* x264 options by their command-line names, applied after the preset. */
    const char *const *option_names;
    const char *const *option_values;
    int option_count;
} gx_settings;

typedef struct {
    const uint8_t *data;
    int size;
    int64_t pts, dts;
    int keyframe;
} gx_picture;

typedef struct {
    x264_t *encoder;
    x264_picture_t input;
    int width, height;
} gx_encoder;

gx_encoder *gx_open(const gx_settings *s) {
    x264_param_t p;
    if (x264_param_default_preset(&p, s->preset, NULL) < 0) return NULL;
    p.i_log_level = X264_LOG_NONE;
    p.i_width = s->width;
    p.i_height = s->height;
    p.i_csp = X264_CSP_I420;
    p.i_fps_num = (uint32_t)s->fps;
    p.i_fps_den = 1;
    p.i_timebase_num = 1;
    p.i_timebase_den = (uint32_t)s->fps;
    p.b_vfr_input = 0;
    p.i_keyint_max = s->keyint;
    p.i_threads = s->threads;
    p.b_deterministic = 1;
    if (!s->bframes) p.i_bframe = 0;
    for (int i = 0; i < s->option_count; i++)
        if (x264_param_parse(&p, s->option_names[i], s->option_values[i]) != 0) return NULL;
    p.rc.i_rc_method = X264_RC_CRF;
    p.rc.f_rf_constant = s->crf;
    /* MP4 form: each NAL unit behind a 4-byte length; SPS and PPS only in the container. */
    p.b_annexb = 0;
    p.b_repeat_headers = 0;
    /* BT.709, limited range, as the converter writes and the container's colr box says. */
    p.vui.i_colorprim = 1;
    p.vui.i_transfer = 1;
    p.vui.i_colmatrix = 1;
    p.vui.b_fullrange = 0;
    if (x264_param_apply_profile(&p, "high") < 0) return NULL;
    gx_encoder *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->encoder = x264_encoder_open(&p);
    if (!e->encoder) {
        free(e);
        return NULL;
    }
    x264_picture_init(&e->input);
    e->input.img.i_csp = X264_CSP_I420;
    e->input.img.i_plane = 3;
    e->width = s->width;
    e->height = s->height;
    return e;
}

/* The first SPS and PPS payloads, without their length prefixes. 0 on success. */
int gx_headers(gx_encoder *e, const uint8_t **sps, int *sps_len, const uint8_t **pps, int *pps_len) {
    x264_nal_t *nals;
    int count;
    if (x264_encoder_headers(e->encoder, &nals, &count) < 0) return -1;
    *sps = *pps = NULL;
    *sps_len = *pps_len = 0;
    for (int i = 0; i < count; i++) {
        if (nals[i].i_payload <= 4) continue;
        if (nals[i].i_type == NAL_SPS && !*sps) {
            *sps = nals[i].p_payload + 4;
            *sps_len = nals[i].i_payload - 4;
        } else if (nals[i].i_type == NAL_PPS && !*pps) {
            *pps = nals[i].p_payload + 4;
            *pps_len = nals[i].i_payload - 4;
        }
    }
    return (*sps && *pps) ? 0 : -1;
}

/* Compresses one I420 picture (planes back to back), or with `planes` NULL drains one delayed
 * picture. 1 when `out` holds a picture (valid until the next call), 0 when none came out, -1 on
 * failure. */
int gx_encode(gx_encoder *e, const uint8_t *planes, int64_t pts, gx_picture *out) {
    x264_nal_t *nals;
    int count;
    x264_picture_t coded;
    int size;
    if (planes) {
        size_t luma = (size_t)e->width * (size_t)e->height;
        e->input.img.plane[0] = (uint8_t *)planes;
        e->input.img.plane[1] = (uint8_t *)planes + luma;
        e->input.img.plane[2] = (uint8_t *)planes + luma + luma / 4;
        e->input.img.i_stride[0] = e->width;
        e->input.img.i_stride[1] = e->width / 2;
        e->input.img.i_stride[2] = e->width / 2;
        e->input.i_pts = pts;
        size = x264_encoder_encode(e->encoder, &nals, &count, &e->input, &coded);
    } else {
        size = x264_encoder_encode(e->encoder, &nals, &count, NULL, &coded);
    }
    if (size < 0) return -1;
    if (size == 0 || count == 0) return 0;
    /* x264 writes a picture's NAL units back to back, starting at the first one's payload. */
    out->data = nals[0].p_payload;
    out->size = size;
    out->pts = coded.i_pts;
    out->dts = coded.i_dts;
    out->keyframe = coded.b_keyframe;
    return 1;
}

/* Pictures x264 still holds (B-frame reordering, lookahead). */
int gx_delayed(gx_encoder *e) { return x264_encoder_delayed_frames(e->encoder); }

void gx_close(gx_encoder *e) {
    if (!e) return;
    x264_encoder_close(e->encoder);
    free(e);
}
