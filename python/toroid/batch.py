"""Runs one toroid pipeline over every image of a folder tree and mirrors the tree in the
output folder: on this machine with a thread pool, or on a Dask cluster with one task per
chunk of files. Each file goes through toroid_process_file (decode, run, encode atomically).

    python3 -m toroid.batch PIPELINE IN_DIR OUT_DIR [--format jpg|png|npy] [--quality N]
                            [--dask local:N | tcp://host:port] [--chunk K] [--threads T]
                            [--allow-paths] [--max-pixels N]

OUT_DIR may not be IN_DIR or lie inside it, and no output may be one of the inputs (a usage
error, nothing written). Ctrl-C stops handing out files, cancels the queued ones, removes
partial outputs and exits with status 130. Progress goes to stderr: a tqdm bar when tqdm is
installed, else a plain line every few seconds.
"""

import argparse
import ctypes
import importlib
import logging
import os
import re
import stat
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import as_completed as futures_completed

from . import _capi, _core
from ._capi import Error

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp", ".npy")
FORMATS = ("jpg", "png", "npy")
DEFAULT_CHUNK = 16
MODES = ("rgb", "gray", "rgb_alpha", "gray_alpha", "unchanged")
DEFAULT_QUALITY = 90
SCHEDULER_TIMEOUT_S = 10
MAX_PIPELINE_BYTES = 16 << 20  # as `toroid apply`


class UsageError(Exception):
    """Bad arguments or an unusable setup: nothing is processed, exit status 2."""


# ---- inputs and outputs ---------------------------------------------------------------------

def list_inputs(in_dir, out_dir=None):
    """(sorted relative paths of the images under in_dir, count of other files). Files
    under out_dir are left out when it lies inside in_dir, so a second run does not take
    the first one's outputs for inputs."""
    in_dir = os.path.abspath(in_dir)
    skip = os.path.abspath(out_dir) if out_dir else None
    images, ignored = [], 0
    for root, dirs, files in os.walk(in_dir):
        if skip is not None:
            dirs[:] = [d for d in dirs if os.path.join(root, d) != skip]
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), in_dir)
            if os.path.splitext(name)[1].lower() in IMAGE_EXTENSIONS:
                images.append(rel)
            else:
                ignored += 1
    images.sort(key=lambda p: p.split(os.sep))
    return images, ignored


def output_relpath(rel, fmt):
    """The output's path relative to OUT_DIR: the input's, with the format's extension when
    one is given (else the input's own, so that its format is kept; WebP, which toroid
    reads but does not write, gives PNG)."""
    if not fmt and os.path.splitext(rel)[1].lower() == ".webp":
        fmt = "png"
    return os.path.splitext(rel)[0] + "." + fmt if fmt else rel


def _kind(mode):
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _read_regular_file(path, max_bytes, what):
    """The bytes of a regular file of at most max_bytes; UsageError for anything else (a
    device, FIFO or socket is refused before it is opened, and the descriptor is checked
    again, opened non-blocking so that a FIFO swapped in cannot hang the read)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError("cannot read %s '%s': it is %s, not a regular file" % (what, path, _kind(st.st_mode)))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UsageError("cannot read %s '%s': it is %s, not a regular file" % (what, path, _kind(st.st_mode)))
            if st.st_size > max_bytes:
                raise UsageError("cannot read %s '%s': the file has %d bytes, more than the limit of %d bytes"
                                 % (what, path, st.st_size, max_bytes))
            data = os.read(fd, max_bytes + 1)
            chunks = [data]
            while data and sum(map(len, chunks)) <= max_bytes:
                data = os.read(fd, max_bytes + 1)
                chunks.append(data)
        finally:
            os.close(fd)
    except OSError as e:
        raise UsageError("cannot read %s '%s': %s" % (what, path, e.strerror or e))
    out = b"".join(chunks)
    if len(out) > max_bytes:
        raise UsageError("cannot read %s '%s': the file has more than the limit of %d bytes" % (what, path, max_bytes))
    return out


def read_pipeline(arg, allow_paths=False):
    """(JSON text, folder that relative grid paths start from) of PIPELINE: a JSON file,
    or inline JSON starting with '['. Raises UsageError when it is unreadable or invalid."""
    if arg.lstrip().startswith("["):
        text, base_dir = arg, os.getcwd()
    else:
        text = _read_regular_file(arg, MAX_PIPELINE_BYTES, "pipeline").decode("utf-8", "replace")
        base_dir = os.path.dirname(os.path.abspath(arg))
    try:
        _core.PipelineHandle(text, base_dir, allow_paths=allow_paths)
    except Error as e:
        raise UsageError("pipeline '%s': %s" % (arg if len(arg) < 80 else arg[:77] + "...", e))
    return text, base_dir


# ---- processing one file (in this process or a worker's) --------------------------------------

_pipelines = {}  # (JSON text, base_dir, allow_paths) -> PipelineHandle: one parse per process
_pipelines_lock = threading.Lock()


def _pipeline(text, base_dir, allow_paths=False):
    key = (text, base_dir, allow_paths)
    with _pipelines_lock:
        p = _pipelines.get(key)
        if p is None:
            p = _pipelines[key] = _core.PipelineHandle(text, base_dir, allow_paths=allow_paths)
        return p


def set_max_pixels(pixels):
    """The decoders' pixel limit for this process (None: leave it; 0: no limit)."""
    if pixels is None:
        return
    if not _capi.has_max_image_pixels:
        raise Error("%s has no toroid_set_max_image_pixels: rebuild libtoroid_c" % _capi.library_path)
    _capi.check(_capi.lib.toroid_set_max_image_pixels(int(pixels)))


def process_file(pipeline, src, dst, options):
    """Runs `pipeline` (a PipelineHandle) on the image file src and writes dst. options:
    dict with threads, quality, format (None: dst's extension), engine, mode (None: unchanged),
    exif (default True), draft (default False: JPEGs decoded whole). Raises Error."""
    if not _capi.has_process_file:
        raise Error("%s has no toroid_process_file: rebuild libtoroid_c" % _capi.library_path)
    o = _capi.FileOptions()
    _capi.lib.toroid_file_options_init(ctypes.byref(o))
    o.threads = int(options.get("threads", 1))
    o.jpeg_quality = int(options.get("quality", DEFAULT_QUALITY))
    fmt, engine, mode = options.get("format"), options.get("engine"), options.get("mode")
    o.format = fmt.encode() if fmt else None
    o.engine = engine.encode() if engine else None
    o.mode = mode.encode() if mode else None
    o.apply_exif_orientation = 1 if options.get("exif", True) else 0
    o.draft = 1 if options.get("draft", False) else 0
    _capi.check(_capi.lib.toroid_process_file(pipeline._handle, os.fsencode(src), os.fsencode(dst),
                                              ctypes.byref(o)))


def _one(pipeline, src, dst, options):
    try:
        process_file(pipeline, src, dst, options)
        return None
    except Error as e:
        # toroid's message starts with the path it was given; the report puts the path as
        # the user gave it in front instead.
        message = str(e)
        return message[len(src) + 2:] if message.startswith(src + ": ") else message
    except Exception as e:  # noqa: BLE001 - one file's failure never stops the others
        return "%s: %s" % (e.__class__.__name__, e)


def process_chunk(text, base_dir, pairs, options):
    """A Dask task: every (src, dst) of the chunk, `options["files_at_once"]` at a time.
    Returns [(src, error message or None)] in the chunk's order; never raises for a file."""
    try:
        set_max_pixels(options.get("max_pixels"))
        pipeline = _pipeline(text, base_dir, bool(options.get("allow_paths")))
    except Error as e:
        return [(src, str(e)) for src, _ in pairs]
    at_once = max(1, int(options.get("files_at_once", 1)))
    if at_once == 1 or len(pairs) == 1:
        return [(src, _one(pipeline, src, dst, options)) for src, dst in pairs]
    with ThreadPoolExecutor(max_workers=min(at_once, len(pairs))) as pool:
        errors = list(pool.map(lambda p: _one(pipeline, p[0], p[1], options), pairs))
    return [(src, err) for (src, _), err in zip(pairs, errors)]


# ---- running the whole tree ---------------------------------------------------------------------

class _PlainProgress:
    """The progress without tqdm: `toroid: DONE/TOTAL images, F failed` on stderr every few
    seconds and once at the end, as `toroid apply` prints on a non-terminal."""

    def __init__(self, total, interval_s=2.0):
        self.total, self.done, self.failed, self.interval_s = total, 0, 0, interval_s
        self.start = self.last = time.perf_counter()

    def update(self, n):
        self.done += n
        now = time.perf_counter()
        if now - self.last >= self.interval_s:
            self.last = now
            self._line()

    def write(self, line, file=None):
        print(line, file=file or sys.stderr, flush=True)

    def _line(self):
        elapsed = time.perf_counter() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        print("toroid: %d/%d images, %d failed, %.1f images/s" % (self.done, self.total, self.failed, rate),
              file=sys.stderr, flush=True)

    def close(self):
        self._line()


def _progress(total):
    try:
        from tqdm import tqdm
    except ImportError:
        return _PlainProgress(total)
    return tqdm(total=total, unit="img", file=sys.stderr, dynamic_ncols=True, mininterval=0.5)


def _report_error(bar, src, message):
    line = "toroid: error: %s: %s" % (src, " ".join(message.split("\n")))
    bar.write(line, file=sys.stderr)


def run_local(text, base_dir, pairs, options, threads, on_done):
    pipeline = _pipeline(text, base_dir, bool(options.get("allow_paths")))
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        futures = {pool.submit(_one, pipeline, src, dst, options): src for src, dst in pairs}
        for fut in futures_completed(futures):
            on_done([(futures[fut], fut.result())])
    except BaseException:
        # Ctrl-C (KeyboardInterrupt): the queued files are cancelled, the ones running
        # finish their file (a C call cannot be interrupted; each writes atomically).
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _connect(spec, timeout_s):
    """A distributed.Client for --dask: `local:N` (a LocalCluster of N one-thread worker
    processes) or a scheduler address. Raises UsageError when it cannot be had."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise UsageError("--dask needs Dask's distributed scheduler (apt-get install python3-distributed): %s" % e)
    if spec.startswith("local:"):
        try:
            n = int(spec[len("local:"):])
        except ValueError:
            n = 0
        if n < 1:
            raise UsageError("--dask local:N needs a worker count N >= 1, got '%s'" % spec)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        return Client(cluster), cluster
    if "://" not in spec:
        raise UsageError("--dask takes local:N or a scheduler address such as tcp://host:8786, got '%s'" % spec)
    try:
        return Client(spec, timeout=timeout_s), None
    except (OSError, TimeoutError, ValueError) as e:
        raise UsageError("cannot reach the Dask scheduler at %s: %s" % (spec, e))


def run_dask(client, text, base_dir, pairs, options, chunk, on_done):
    from distributed import as_completed
    # By module name, so that workers import toroid.batch rather than unpickle __main__.
    task = importlib.import_module("toroid.batch").process_chunk
    futures = {}
    for i in range(0, len(pairs), chunk):
        c = pairs[i:i + chunk]
        futures[client.submit(task, text, base_dir, c, options, pure=False)] = c
    try:
        for fut in as_completed(list(futures)):
            c = futures.pop(fut)
            try:
                results = fut.result()
            except Exception as e:  # noqa: BLE001 - a lost worker fails its chunk only
                reason = "task failed: %s: %s" % (e.__class__.__name__, e)
                results = [(src, reason) for src, _ in c]
            on_done(results)
    except BaseException:
        # Ctrl-C: the tasks not yet done are cancelled on the cluster.
        if futures:
            client.cancel(list(futures), force=True)
        raise


def plan(args, in_dir, out_dir):
    """(input/output pairs, clashes as (src, message), ignored count, how to show a src)."""
    images, ignored = list_inputs(in_dir, out_dir)
    pairs, clashes, owner = [], [], {}
    for rel in images:
        src = os.path.join(args.in_dir, rel)
        out_rel = output_relpath(rel, args.format)
        key = os.path.normcase(out_rel)
        if key in owner:  # a.png and a.jpg both become a.npy: keep the first
            clashes.append((src, "its output %s is also the output of %s" % (out_rel, owner[key])))
            continue
        owner[key] = src
        # Dask workers may run elsewhere: they get absolute paths (the same on every
        # machine with a shared file system); messages show the paths as given.
        pairs.append((os.path.abspath(src) if args.dask else src, os.path.join(out_dir, out_rel)))
    shown = {p[0]: os.path.join(args.in_dir, os.path.relpath(p[0], in_dir)) for p in pairs} if args.dask else {}
    return pairs, clashes, ignored, shown


def check_folders(in_dir, out_dir, shown_in, shown_out):
    """UsageError when OUT_DIR is IN_DIR or lies inside it, once ".", ".." and symlinks are
    resolved: the results would overwrite the inputs, or be taken for inputs."""
    real_in, real_out = os.path.realpath(in_dir), os.path.realpath(out_dir)
    if real_in == real_out:
        raise UsageError("output folder '%s' is the input folder '%s': the results would overwrite the inputs; "
                         "choose another output folder" % (shown_out, shown_in))
    if real_out.startswith(real_in.rstrip(os.sep) + os.sep):
        raise UsageError("output folder '%s' lies inside the input folder '%s': choose an output folder outside it"
                         % (shown_out, shown_in))


def check_outputs_apart(pairs):
    """UsageError when a planned output is one of the inputs (by resolved path or inode: an
    input folder inside the output folder, a symlink, a hard link)."""
    ids, paths = set(), set()
    for src, _ in pairs:
        paths.add(os.path.realpath(src))
        try:
            st = os.stat(src)
            ids.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    for _, dst in pairs:
        try:
            st = os.stat(dst)
            same = (st.st_dev, st.st_ino) in ids
        except OSError:
            same = False
        if same or os.path.realpath(dst) in paths:
            raise UsageError("output '%s' is one of the input files: the run would overwrite what it reads; choose an "
                             "output folder apart from the input folder" % dst)


def check_format(text, base_dir, allow_paths, pairs, fmt):
    """UsageError when the pipeline's result for uint8 images (what .jpg and .png inputs
    decode to) is not uint8 while an output format is PNG or JPEG: one error before the
    first file instead of one per file."""
    formats = set()
    for src, _ in pairs:
        ext = os.path.splitext(src)[1].lower()
        if ext in (".jpg", ".jpeg", ".png", ".webp"):
            formats.add(fmt or ("jpg" if ext in (".jpg", ".jpeg") else "png"))
    formats.discard("npy")
    if not formats:
        return
    handle = _pipeline(text, base_dir, allow_paths)
    for shape in ((1, 3, 512, 512), (1, 3, 4096, 4096), (1, 1, 512, 512), (1, 3, 64, 64)):
        strides = [shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1]
        desc = _core.make_desc(_capi.UINT8, shape, strides)
        out = _capi.TensorDesc()
        if _capi.lib.toroid_output_desc(handle._handle, ctypes.byref(desc), ctypes.byref(out)) != 0:
            continue  # this probe's size does not suit the pipeline: try another
        png16_ok = out.dtype == _capi.UINT16 and formats == {"png"}
        if out.dtype != _capi.UINT8 and not png16_ok:
            name = _core._DTYPE_NAMES.get(out.dtype, "not uint8")
            why = ("the output format (%s)" % fmt) if fmt else ("the inputs' own format (%s)" % ", ".join(sorted(formats)))
            holds = "uint8 and uint16" if formats == {"png"} else "uint8"
            raise UsageError("the pipeline's result is %s for uint8 images, and %s holds %s only: give --format "
                             "npy, or end the pipeline with {\"op\": \"convert\", \"dtype\": \"uint8\"}"
                             % (name, why, holds))
        return


_TEMP = re.compile(r"^\.(.+)\.tmp\.\d+\.[0-9a-f]{16}$")


def remove_partial_outputs(pairs):
    """Removes the temporary files (".NAME.tmp.PID.RANDOM", see write_file_atomic) of the
    planned outputs, left by a write that was cut off (a worker process killed mid-file)."""
    names = {}
    for _, dst in pairs:
        d, n = os.path.split(dst)
        names.setdefault(d or ".", set()).add(n)
    removed = 0
    for d, wanted in names.items():
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        for entry in entries:
            m = _TEMP.match(entry)
            if m and m.group(1) in wanted:
                try:
                    os.unlink(os.path.join(d, entry))
                    removed += 1
                except OSError:
                    pass
    return removed


def run(args):
    """Processes the tree; returns the exit status (0: all written, 1: some failed)."""
    if not _capi.has_process_file:
        raise UsageError("%s has no toroid_process_file: rebuild libtoroid_c" % _capi.library_path)
    if not os.path.isdir(args.in_dir):
        raise UsageError("input folder '%s' does not exist" % args.in_dir)
    in_dir, out_dir = os.path.abspath(args.in_dir), os.path.abspath(args.out_dir)
    check_folders(in_dir, out_dir, args.in_dir, args.out_dir)  # before anything is touched
    if args.max_pixels is not None:
        try:
            set_max_pixels(args.max_pixels)
        except Error as e:
            raise UsageError(str(e))
    text, base_dir = read_pipeline(args.pipeline, args.allow_paths)
    pairs, clashes, ignored, shown = plan(args, in_dir, out_dir)
    check_outputs_apart(pairs)
    try:
        check_format(text, base_dir, args.allow_paths, pairs, args.format)
    except Error as e:
        raise UsageError(str(e))
    counts = {"written": 0, "failed": 0}
    client = cluster = None
    if args.dask:  # before any output: an unreachable scheduler is a usage error
        client, cluster = _connect(args.dask, args.connect_timeout)
    try:
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            raise UsageError("cannot create output folder '%s': %s" % (args.out_dir, e.strerror or e))
        start = time.perf_counter()
        at_once = args.threads or (1 if args.dask else (os.cpu_count() or 1))
        # Files run side by side, so each file's kernels get the cores left over (one each
        # when every core already has a file).
        options = {"threads": 1 if args.dask else max(1, (os.cpu_count() or 1) // at_once),
                   "quality": args.quality, "format": args.format, "engine": args.engine,
                   "mode": args.mode, "exif": not args.no_exif_orientation, "draft": args.draft,
                   "files_at_once": at_once, "allow_paths": args.allow_paths, "max_pixels": args.max_pixels}
        bar = _progress(len(pairs) + len(clashes))

        def on_done(results):
            for src, err in results:
                if err is None:
                    counts["written"] += 1
                else:
                    counts["failed"] += 1
                    _report_error(bar, shown.get(src, src), err)
            bar.update(len(results))

        try:
            on_done(clashes)
            if client is not None:
                run_dask(client, text, base_dir, pairs, options, args.chunk, on_done)
            else:
                run_local(text, base_dir, pairs, options, at_once, on_done)
        finally:
            bar.close()
        elapsed = time.perf_counter() - start
    except KeyboardInterrupt:
        _close(client, cluster)
        client = cluster = None
        remove_partial_outputs(pairs)
        _interrupted.append("toroid: interrupted: %d written, %d failed, %d not done (cancelled)" % (
            counts["written"], counts["failed"], len(pairs) + len(clashes) - counts["written"] - counts["failed"]))
        raise
    finally:
        _close(client, cluster)
    # The summary of `toroid apply`'s folder mode, word for word.
    rate = (counts["written"] + counts["failed"]) / elapsed if elapsed > 0 else 0.0
    print("toroid: %d written, %d failed, %d ignored (not images), %.2f s, %.1f images/s" %
          (counts["written"], counts["failed"], ignored, elapsed, rate))
    sys.stdout.flush()
    return 1 if counts["failed"] else 0


_interrupted = []  # the line main prints for Ctrl-C, when run got that far


def _close(client, cluster):
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, toroid's way, exit status 2
        raise UsageError(message)


def parse_args(argv):
    ap = _Parser(prog="python3 -m toroid.batch",
                 description="Run a toroid pipeline on every image (.jpg .jpeg .png .webp .npy) under IN_DIR and "
                             "write the results to the same relative paths under OUT_DIR.")
    ap.add_argument("pipeline", metavar="PIPELINE", help="pipeline JSON file, or inline JSON starting with '['")
    ap.add_argument("in_dir", metavar="IN_DIR", help="folder searched recursively for images")
    ap.add_argument("out_dir", metavar="OUT_DIR", help="folder the outputs are written to (created if missing)")
    ap.add_argument("--format", choices=FORMATS, default=None,
                    help="output format (default: each input's own)")
    ap.add_argument("--quality", type=int, default=DEFAULT_QUALITY, help="JPEG quality 1..100 (default 90)")
    ap.add_argument("--dask", metavar="local:N|tcp://HOST:PORT", default="",
                    help="run on Dask: a local cluster of N worker processes, or a running scheduler")
    ap.add_argument("--connect-timeout", type=float, default=SCHEDULER_TIMEOUT_S,
                    help="seconds to wait for the Dask scheduler (default %d)" % SCHEDULER_TIMEOUT_S)
    ap.add_argument("--chunk", type=int, default=DEFAULT_CHUNK,
                    help="files per Dask task (default %d)" % DEFAULT_CHUNK)
    ap.add_argument("--threads", type=int, default=0,
                    help="files processed at once in each process (default: every core locally, 1 per "
                         "Dask task)")
    ap.add_argument("--engine", choices=("compiled", "reference"), default="compiled",
                    help="toroid engine (default compiled)")
    ap.add_argument("--mode", choices=MODES, default="rgb",
                    help="channels PNG/JPEG inputs decode to, as torchvision's decode_image converts them "
                         "(default rgb)")
    ap.add_argument("--no-exif-orientation", action="store_true",
                    help="do not apply the EXIF orientation of PNG/JPEG inputs (applied by default)")
    ap.add_argument("--draft", action="store_true",
                    help="decode JPEGs at 1/2, 1/4 or 1/8 scale where the pipeline's first op resizes them to at "
                         "most that (faster; not exact)")
    ap.add_argument("--allow-paths", action="store_true",
                    help="let grid paths in the pipeline be absolute or leave the pipeline file's folder")
    ap.add_argument("--max-pixels", type=int, default=None,
                    help="refuse images of more pixels than this before decoding (default 178956970 or "
                         "$TOROID_MAX_IMAGE_PIXELS; 0: no limit)")
    args = ap.parse_args(argv)
    if args.max_pixels is not None and args.max_pixels < 0:
        ap.error("--max-pixels must be at least 0, got %d" % args.max_pixels)
    if not 1 <= args.quality <= 100:
        ap.error("--quality must be in 1..100, got %d" % args.quality)
    if args.chunk < 1:
        ap.error("--chunk must be at least 1, got %d" % args.chunk)
    if args.connect_timeout <= 0:
        ap.error("--connect-timeout must be positive")
    if args.threads < 0:
        ap.error("--threads must be at least 1, got %d" % args.threads)
    return args


def main(argv=None):
    try:
        return run(parse_args(sys.argv[1:] if argv is None else argv))
    except UsageError as e:
        print("toroid: error: %s" % " ".join(str(e).split()), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_interrupted[-1] if _interrupted else "toroid: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
