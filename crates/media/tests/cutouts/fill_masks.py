#!/usr/bin/env python3
"""Fill the hand-drawn outlines of one set into its masks.

Usage: python3 fill_masks.py SET/polygons [name ...], e.g. heldout4/polygons: each
SET/polygons/<name>.txt is filled into SET/<name>.mask.png.

Each <name>.txt holds shapes, each started by a header line and followed by
vertex coordinates "x,y" (whitespace separated, any number per line):
  add            polygon added to the subject
  sub            polygon removed from the subject (holes, occluders)
  addline W      polyline of width W px added to the subject
  subline W      polyline of width W px removed from the subject
  norefine       polygon inside which the colour refinement is not applied
  colorsub B L   polygon inside which every pixel with CIELAB b* > B or
                 L* > L is removed from the subject (heldout4: the light
                 shining through the cut-out numerals of wall_clock.jpg)
  refine B R     (single line) refine pixels within B px of the hand
                 outline by the colour rule below, seeds from rings R px wide
Shapes are applied in file order; add/sub/addline/subline shapes placed
after the "refine" line are applied after the refinement (used for thin
occluders such as grass blades, which the colour rule cannot see, and for
the scanner border of heldout5/young_man.jpg). Coordinates are continuous image
coordinates: pixel (i, j) covers [i, i+1) x [j, j+1), so a vertex read off
the pixel grid of a zoomed crop sits on a pixel corner. Polygons are
rasterised at 8x8 supersampling and a pixel is subject when at least half
of it is covered, so the mask has hard edges.

Colour refinement (only where a file has a "refine" line): a pixel within
B px of the hand outline (and outside every "norefine" polygon) is set to
subject or background by the nearest seed colour in CIELAB, where the
subject seeds are the pixels B+1..B+R px inside the hand outline and the
background seeds the pixels B+1..B+R px outside it, both within 2B+R+4 px of
the pixel. Afterwards subject islands not connected to the hand-drawn core
and small background holes (< 40 px) not connected to the outside are
removed. Only NumPy, SciPy and Pillow are used.

Usage: python3 fill_masks.py [name ...]   (default: every *.txt here)
"""
import sys, glob, os
import numpy as np
from PIL import Image, ImageDraw
from scipy import ndimage
from scipy.spatial import cKDTree

HERE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.getcwd()
OUT = os.path.dirname(HERE)
SS = 8


def parse(path):
    shapes, refine = [], None
    cur = None
    post = False
    for raw in open(path):
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        head = line.split()
        if head[0] in ('add', 'sub', 'addline', 'subline', 'norefine', 'colorsub'):
            width = float(head[1]) if head[0].endswith('line') else 0
            if head[0] == 'colorsub':
                width = (float(head[1]), float(head[2]))
            cur = [head[0], width, [], post and head[0] != 'norefine']
            shapes.append(cur)
            continue
        if head[0] == 'refine':
            refine = (int(head[1]), int(head[2]))
            cur = None
            post = True
            continue
        for tok in head:
            x, y = tok.split(',')
            cur[2].append((float(x), float(y)))
    return shapes, refine


def raster(kind, width, pts, w, h):
    img = Image.new('L', (w * SS, h * SS), 0)
    d = ImageDraw.Draw(img)
    sp = [(x * SS, y * SS) for x, y in pts]
    if kind.endswith('line'):
        d.line(sp, fill=255, width=max(1, int(round(width * SS))), joint='curve')
        r = width * SS / 2
        for x, y in sp:
            d.ellipse([x - r, y - r, x + r, y + r], fill=255)
    else:
        d.polygon(sp, fill=255)
    a = np.asarray(img, dtype=np.float32).reshape(h, SS, w, SS).mean(axis=(1, 3))
    return a >= 127.5


def srgb_to_lab(rgb):
    c = rgb / 255.0
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    M = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = c @ M.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    L = 116 * f[..., 1] - 16
    a = 500 * (f[..., 0] - f[..., 1])
    b = 200 * (f[..., 1] - f[..., 2])
    return np.stack([L, a, b], -1)


def refine_mask(img, hand, allowed, B, R):
    lab = srgb_to_lab(img.astype(np.float64))
    din = ndimage.distance_transform_edt(hand)
    dout = ndimage.distance_transform_edt(~hand)
    band = ((hand & (din <= B)) | (~hand & (dout <= B))) & allowed
    fg_seed = hand & (din > B) & (din <= B + R)
    bg_seed = ~hand & (dout > B) & (dout <= B + R)
    out = hand.copy()
    q = np.argwhere(band)
    rad = 2 * B + R + 4
    best = {}
    for lab_name, seed in (('fg', fg_seed), ('bg', bg_seed)):
        sp = np.argwhere(seed)
        dist = np.full(len(q), np.inf)
        if len(sp):
            tree = cKDTree(sp)
            sc = lab[seed]
            for i, nb in enumerate(tree.query_ball_point(q, rad)):
                if nb:
                    diff = sc[nb] - lab[q[i][0], q[i][1]]
                    dist[i] = np.sqrt((diff * diff).sum(1)).min()
        best[lab_name] = dist
    fg = best['fg'] <= best['bg']
    out[q[:, 0], q[:, 1]] = fg
    core = hand & (din > B)
    lbl, n = ndimage.label(out)
    keep = np.unique(lbl[core])
    out = np.isin(lbl, keep[keep > 0])
    outside = ~hand & (dout > B)
    lbl, n = ndimage.label(~out)
    sizes = ndimage.sum(np.ones_like(lbl), lbl, range(n + 1))
    touch = np.unique(lbl[outside])
    for k in range(1, n + 1):
        if sizes[k] < 40 and k not in touch:
            out[lbl == k] = True
    return out


def fill(name):
    img = np.asarray(Image.open(os.path.join(OUT, name + '.jpg')).convert('RGB'))
    h, w, _ = img.shape
    shapes, refine = parse(os.path.join(HERE, name + '.txt'))
    m = np.zeros((h, w), bool)
    allowed = np.ones((h, w), bool)
    def apply(kind, width, pts):
        nonlocal m, allowed
        r = raster(kind, width, pts, w, h)
        if kind in ('add', 'addline'):
            m |= r
        elif kind in ('sub', 'subline'):
            m &= ~r
        elif kind == 'colorsub':
            lab = srgb_to_lab(img.astype(np.float64))
            hit = r & m & ((lab[..., 2] > width[0]) | (lab[..., 0] > width[1]))
            # drop specks: removed areas < 6 px stay subject, subject
            # specks < 6 px left inside a removed area become background
            lbl, n = ndimage.label(hit)
            sizes = ndimage.sum(hit, lbl, range(n + 1))
            hit = hit & (sizes[lbl] >= 6)
            keep = r & m & ~hit
            lbl, n = ndimage.label(keep)
            sizes = ndimage.sum(keep, lbl, range(n + 1))
            touch = set(np.unique(lbl[~r | ndimage.binary_dilation(~m & ~r)]).tolist())
            small = np.isin(lbl, [k for k in range(1, n + 1) if sizes[k] < 6 and k not in touch])
            m &= ~(hit | small)
        else:
            allowed &= ~r
    for kind, width, pts, after in shapes:
        if not after:
            apply(kind, width, pts)
    if refine:
        m = refine_mask(img, m, allowed, *refine)
    for kind, width, pts, after in shapes:
        if after:
            apply(kind, width, pts)
    Image.fromarray((m * 255).astype(np.uint8), 'L').save(os.path.join(OUT, name + '.mask.png'))
    print(f'{name}: {w}x{h}, subject {100 * m.mean():.1f} %')


if __name__ == '__main__':
    names = sys.argv[2:] or sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(HERE, '*.txt')))
    for n in names:
        fill(n)
