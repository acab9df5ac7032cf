! Fortran MPI-IO: every rank opens <dir>/fortran.dat, writes its 4 integers at byte
! 16 * rank with MPI_File_write_at_all, syncs, reads them back with MPI_File_read_at, then
! writes 2 more integers at its individual file pointer (MPI_File_write after a set_view
! displacement of 16 * nprocs + 8 * rank bytes) and closes.
program fortran_mpi_io
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, fh
  integer :: block(4), back(4), pair(2)
  integer(kind=MPI_OFFSET_KIND) :: offset
  character(len=4096) :: directory
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, directory)
  call MPI_File_open(MPI_COMM_WORLD, trim(directory) // '/fortran.dat', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  block = rank
  offset = 16 * rank
  call MPI_File_write_at_all(fh, offset, block, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_File_read_at(fh, offset, back, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  offset = 16 * nprocs + 8 * rank
  call MPI_File_set_view(fh, offset, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  pair = rank
  call MPI_File_write(fh, pair, 2, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Finalize(ierr)
end program fortran_mpi_io
